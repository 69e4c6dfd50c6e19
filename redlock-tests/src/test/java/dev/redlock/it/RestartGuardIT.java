package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.params.RestoreParams;

/**
 * The restart guard's cases of docs/fencing.md that need no stale snapshot (those are in
 * StaleRestartIT): a restart from an AOF fsynced on every write keeps the vote; a node whose ACL
 * refuses INFO never votes; one that refuses CONFIG counts as not durable; a flush, and a marker
 * restored from another process life. Three nodes with {@code appendonly yes} and {@code
 * appendfsync always}.
 */
class RestartGuardIT extends RealNodesTest {
  RestartGuardIT() {
    super(RedisFixture.nodes(3).persistence(Persistence.AOF));
  }

  /**
   * Long enough that a loaded machine still makes the first acquisition after a restart within the
   * window a durable restart is trusted in ({@code maxTtl} less a second of the node's uptime).
   */
  static final Duration MAX_TTL = Duration.ofSeconds(5);

  static final String LIFE = RedlockConfig.DEFAULT_KEY_PREFIX + "@life";

  /**
   * A client of the three nodes that trusts fsynced AOF restarts; node 0 reached as {@code node0}
   * (a URI) says.
   */
  Redlock client(String node0) {
    return client(node0, true);
  }

  Redlock client(String node0, boolean trustFsyncedAofRestarts) {
    List<String> uris = new ArrayList<>(nodes.uris());
    uris.set(0, node0);
    return client(
        RedlockConfig.builder()
            .nodes(uris)
            .nodeTimeout(nodeTimeout())
            .retryDelay(Duration.ofMillis(20))
            .retryJitter(Duration.ofMillis(20))
            .maxTtl(MAX_TTL)
            .restartGuard(
                trustFsyncedAofRestarts ? RestartGuard.TRUST_FSYNCED_AOF_RESTARTS : RestartGuard.ON)
            .build());
  }

  Redlock client3() {
    return client(nodes.uris().get(0));
  }

  /** Takes the lock once so every node's marker is stamped by its connections, then releases. */
  void stampMarkers(Redlock redlock) throws InterruptedException {
    redlock.acquire(resource(), MAX_TTL, Duration.ofSeconds(5)).release();
    // A release returns once a quorum confirmed it: wait for the rest, so that a restart next
    // does not bring the key back from the AOF.
    await()
        .atMost(NO_HANG)
        .until(() -> nodes.all().stream().allMatch(n -> Admin.get(n, key()) == null));
  }

  /** Node 1 frozen: a grant now needs node 0's vote. Returns what node 0 answered. */
  NodeOutcome nodeZeroAloneDecides(Redlock redlock) {
    nodes.node(1).pause();
    try {
      java.util.Optional<Lease> won = redlock.tryAcquire(resource(), MAX_TTL);
      if (won.isPresent()) {
        NodeOutcome zero = won.get().nodeOutcomes().get(0);
        won.get().release();
        return zero;
      }
      throw new AssertionError("held elsewhere: no lease should be held");
    } catch (LockUnavailableException e) {
      return e.nodeOutcomes().get(0);
    } finally {
      nodes.node(1).resume();
    }
  }

  static String lifeOn(RedisNode node) {
    return Admin.get(node, LIFE);
  }

  /** The durable flag of a life marker {@code <run_id>:<db>:<prefix>:<d>:<epoch>}. */
  static char durable(String marker) {
    String[] parts = marker.split(":", -1);
    return parts[parts.length - 2].charAt(0);
  }

  static String runIdOf(RedisNode node) {
    try (Jedis jedis = Admin.on(node)) {
      return NodeData.runId(jedis);
    }
  }

  @Test
  void aRestartFromAnAofFsyncedOnEveryWriteKeepsTheNodesVote() throws Exception {
    stampMarkers(client3());
    String before = lifeOn(nodes.node(0));
    assertEquals('1', durable(before), "both lives durable: " + before);
    nodes.node(0).restart(Persistence.AOF);
    NodeOutcome zero = nodeZeroAloneDecides(client3());
    assertEquals(NodeOutcome.Status.OK, zero.status(), zero.toString());
    String after = lifeOn(nodes.node(0));
    assertEquals(runIdOf(nodes.node(0)) + before.substring(40), after, "re-stamped, same epoch");
  }

  /** The default: a restart is a restart, whatever the persistence; always safe. */
  @Test
  void withoutTheOptInEvenAnAofFsyncedOnEveryWriteRestartIsQuarantined() throws Exception {
    stampMarkers(client3());
    nodes.node(0).restart(Persistence.AOF);
    NodeOutcome zero = nodeZeroAloneDecides(client(nodes.uris().get(0), false));
    assertEquals(NodeOutcome.Status.QUARANTINED, zero.status(), zero.toString());
  }

  /** A reply of BUSY to the connection's INFO costs that vote only, not the connection's life. */
  @Test
  void aNodeBusyWhenAConnectionReadsItsLifeVotesAgainOnceItAnswers() throws Exception {
    RedisNode zero = nodes.node(0);
    Thread busy = Admin.busyScript(zero);
    try {
      Redlock redlock = client3();
      NodeOutcome during = nodeZeroAloneDecides(redlock);
      assertEquals(NodeOutcome.Status.FAILED, during.status(), during.toString());
      assertTrue(during.detail().contains("asks again"), during.detail());
      Admin.killScript(zero);
      busy.join(10_000);
      NodeOutcome after = nodeZeroAloneDecides(redlock);
      assertEquals(NodeOutcome.Status.OK, after.status(), after.toString());
    } finally {
      Admin.killScript(zero);
    }
  }

  @Test
  void aRestartWithoutDataIsQuarantinedForMaxTtl() throws Exception {
    stampMarkers(client3());
    nodes.node(0).restart(Persistence.NONE);
    try {
      NodeOutcome zero = nodeZeroAloneDecides(client3());
      assertEquals(NodeOutcome.Status.QUARANTINED, zero.status(), zero.toString());
    } finally {
      nodes.node(0).restart(Persistence.AOF); // as the other tests expect it
    }
  }

  @Test
  void aFlushedNodeIsQuarantinedForMaxTtl() throws Exception {
    stampMarkers(client3());
    try (Jedis jedis = Admin.on(nodes.node(0))) {
      jedis.flushAll();
    }
    Redlock redlock = client3();
    NodeOutcome zero = nodeZeroAloneDecides(redlock);
    assertEquals(NodeOutcome.Status.QUARANTINED, zero.status(), zero.toString());
    long over = System.nanoTime() + MAX_TTL.plusMillis(200).toNanos();
    await().atMost(NO_HANG).until(() -> System.nanoTime() > over);
    assertEquals(NodeOutcome.Status.OK, nodeZeroAloneDecides(redlock).status());
  }

  /**
   * A RESTORE of keys from a backup of another process life brings a marker this one did not stamp:
   * not trusted, even on a durable node, once its first acquisition after its start is past.
   */
  @Test
  void aMarkerRestoredFromAnotherProcessLifeIsNotTrusted() throws Exception {
    Redlock redlock = client3();
    stampMarkers(redlock);
    await().atMost(NO_HANG).until(() -> uptimeSeconds(nodes.node(0)) > MAX_TTL.toSeconds());
    byte[] foreign;
    try (Jedis other = Admin.on(nodes.node(2))) {
      foreign = other.dump(LIFE);
    }
    try (Jedis jedis = Admin.on(nodes.node(0))) {
      jedis.restore(LIFE, 0, foreign, RestoreParams.restoreParams().replace());
    }
    NodeOutcome zero = nodeZeroAloneDecides(redlock);
    assertEquals(NodeOutcome.Status.QUARANTINED, zero.status(), zero.toString());
    assertTrue(lifeOn(nodes.node(0)).startsWith(runIdOf(nodes.node(0)) + ":"), "re-stamped");
  }

  @Test
  void aNodeWhoseAclRefusesInfoNeverVotesAndTheAccountSaysWhatToGrant() throws Exception {
    try (Jedis jedis = Admin.on(nodes.node(0))) {
      jedis.aclSetUser("noinfo", "on", ">pw", "~*", "+@all", "-info");
    }
    try {
      Redlock redlock = client("redis://noinfo:pw@127.0.0.1:" + nodes.node(0).port());
      NodeOutcome zero = nodeZeroAloneDecides(redlock);
      assertEquals(NodeOutcome.Status.FAILED, zero.status(), zero.toString());
      assertTrue(zero.detail().contains("grant its user +info"), zero.detail());
      assertTrue(
          redlock.tryAcquire(resource(), MAX_TTL).isPresent(), "the other two nodes still decide");
    } finally {
      try (Jedis jedis = Admin.on(nodes.node(0))) {
        jedis.aclDelUser("noinfo");
      }
    }
  }

  @Test
  void aNodeWhoseAclRefusesConfigCountsAsNotDurable() throws Exception {
    String user = "redis://noconfig:pw@127.0.0.1:" + nodes.node(0).port();
    createNoConfigUser(nodes.node(0));
    stampMarkers(client(user));
    // Lowered once node 0 ran the acquire (a quorum may have decided without waiting for it).
    await().atMost(NO_HANG).until(() -> durable(lifeOn(nodes.node(0))) == '0');
    nodes.node(0).restart(Persistence.AOF); // the ACL user is configuration: made again
    createNoConfigUser(nodes.node(0));
    NodeOutcome zero = nodeZeroAloneDecides(client3());
    assertEquals(
        NodeOutcome.Status.QUARANTINED, zero.status(), "a restart is not trusted: " + zero);
  }

  private static void createNoConfigUser(RedisNode node) {
    try (Jedis jedis = Admin.on(node)) {
      jedis.aclSetUser("noconfig", "on", ">pw", "~*", "+@all", "-config");
    }
  }

  static long uptimeSeconds(RedisNode node) {
    try (Jedis jedis = Admin.on(node)) {
      for (String line : jedis.info("server").split("\\r?\\n")) {
        if (line.startsWith("uptime_in_seconds:")) {
          return Long.parseLong(line.substring("uptime_in_seconds:".length()).trim());
        }
      }
    }
    throw new IllegalStateException("no uptime");
  }

  @Test
  void quarantineIsNotContention() {
    Redlock redlock = client3();
    try (Jedis jedis = Admin.on(nodes.node(0))) {
      jedis.del(LIFE);
    }
    try (Jedis jedis = Admin.on(nodes.node(1))) {
      jedis.del(LIFE);
    }
    LockUnavailableException e =
        assertThrows(LockUnavailableException.class, () -> redlock.tryAcquire(resource(), MAX_TTL));
    assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason(), e.getMessage());
  }
}
