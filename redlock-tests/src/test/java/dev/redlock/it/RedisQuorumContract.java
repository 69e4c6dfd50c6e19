package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.LeaseContract;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import redis.clients.jedis.Jedis;

/**
 * The lease contract ({@link LeaseContract}: what every store keeps) plus what only a quorum of
 * Redis nodes can be asked (keys on the nodes, the prefix, a killed or frozen minority and
 * majority, {@code NOSCRIPT}, a wrong password, connections after {@code close()}), against real
 * redis-server processes, for every topology by the subclasses (1, 3 and 5 nodes; Redis 7 and 6.2).
 * The nodes come from the kit's {@link RedisFixture}, per class, as each subclass's constructor
 * says. Each Redis-only test names its own resource ({@link #resource()}); the contract's tests
 * name theirs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RedisQuorumContract extends LeaseContract implements RealNodesSuite {
  /** The ttl of the Redis-only tests: none of them outlives it. */
  static final Duration TTL = TIMING.scaled(Duration.ofSeconds(10));

  /** The class's nodes: K per class, emptied and vouched for before each test. */
  @RegisterExtension final RedisFixture redis;

  /** A contract on the nodes of {@code spec}. */
  RedisQuorumContract(RedisFixture.Spec spec) {
    redis = RedisFixture.perClass(spec);
  }

  /**
   * Runs before the contract's own clean-up: the Redlocks closed, every node healed (the fixture
   * would do it after the contract's).
   */
  @AfterEach
  void closeRedlocks() {
    redis().closeTestResources();
  }

  // ---- the contract's hooks, and the suites' ------------------------------------------------

  @Override
  public RedisFixture redis() {
    return redis;
  }

  /**
   * A Redlock over every node with the fixture's settings (as {@link #config()}), then the test's.
   */
  @Override
  protected Redlock createClient(Consumer<RedlockConfig.Builder> settings) {
    RedlockConfig.Builder config =
        RedlockConfig.builder()
            .nodeTimeout(NODE_TIMEOUT)
            .retryDelay(Duration.ofMillis(20))
            .retryJitter(Duration.ofMillis(20));
    settings.accept(config);
    config.nodes(nodes().uris());
    redis().tls().ifPresent(tls -> config.tlsSocketFactory(tls.socketFactory()));
    return Redlock.create(config.build());
  }

  /** 1 s, scaled: five node timeouts, a renewal every third. */
  @Override
  protected Duration shortTtl() {
    return TIMING.scaled(Duration.ofSeconds(1));
  }

  /** A frozen majority (SIGSTOP): nothing can be granted or renewed. */
  @Override
  protected void disconnect() {
    firstNodes(quorum()).forEach(RedisNode::pause);
  }

  @Override
  protected void reconnect() {
    for (RedisNode node : nodes().all()) {
      if (node.isRunning() && node.isPaused()) {
        node.resume();
      }
    }
  }

  /** Each node's URI, in the configured order. */
  @Override
  protected List<String> nodeNames() {
    return nodes().uris();
  }

  /** No running node has the resource's key, within half the ttl (as {@link #awaitNoKeyLeft}). */
  @Override
  protected void awaitNothingKept(String resource) {
    String key = RedlockConfig.DEFAULT_KEY_PREFIX + resource;
    await("no node keeps " + key)
        .atMost(TTL.dividedBy(2))
        .until(() -> redis().nodesWithKey(key) == 0);
  }

  /** Running, unpaused nodes that have the resource's key now. */
  @Override
  protected long placesHolding(String resource) {
    return redis().nodesWithKey(RedlockConfig.DEFAULT_KEY_PREFIX + resource);
  }

  // ---- the Redis-only tests' tools -----------------------------------------------------------

  /** The class's nodes, in the configured order. */
  RedisNodes nodes() {
    return redis.nodes();
  }

  int n() {
    return nodes().size();
  }

  int quorum() {
    return n() / 2 + 1;
  }

  /** The largest number of nodes that may fail while a quorum is still reachable. */
  int minority() {
    return n() - quorum();
  }

  /** The first {@code count} nodes. */
  List<RedisNode> firstNodes(int count) {
    return nodes().all().subList(0, count);
  }

  /**
   * What {@code attempt} throws, within {@link #NO_HANG}: the lock is unavailable, a quorum
   * unreachable.
   */
  static LockUnavailableException quorumUnreachable(Executable attempt) {
    LockUnavailableException e =
        assertTimeoutPreemptively(
            NO_HANG, () -> assertThrows(LockUnavailableException.class, attempt));
    assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
    return e;
  }

  /** A Redlock with {@link #config()}, closed after the test. */
  Redlock redlock() {
    return client(config().build());
  }

  /**
   * Waits until no live node has the key, for at most half the ttl: if a rollback or release had
   * not happened, the key would still be there then; a loaded machine only makes it later.
   */
  void awaitNoKeyLeft(String why) {
    await(why).atMost(TTL.dividedBy(2)).until(() -> nodesWithKey() == 0);
  }

  // ---- happy path -------------------------------------------------------------------------

  @Test
  void acquireWritesTheKeyOnEveryNodeAndReleaseRemovesIt() throws Exception {
    Redlock redlock = redlock();
    try (Lease lease = redlock.acquire(resource(), TTL, TIMING.scaled(Duration.ofSeconds(2)))) {
      assertEquals(resource(), lease.resource());
      assertTrue(lease.isValid());
      assertTrue(
          lease.remainingValidity().compareTo(TTL) < 0, "validity is ttl minus elapsed and drift");
      assertTrue(
          lease.remainingValidity().compareTo(TTL.minus(TIMING.scaled(Duration.ofSeconds(1)))) > 0,
          "healthy nodes leave most of the ttl");
      await()
          .atMost(NO_HANG)
          .until(() -> nodesWithKey() == n()); // stragglers beyond the quorum land too
      String token = Admin.get(nodes().node(0), key());
      for (RedisNode node : nodes().all()) {
        assertEquals(token, Admin.get(node, key()), "one token on every node");
        long pttl = Admin.pttl(node, key());
        assertTrue(pttl > 0 && pttl <= TTL.toMillis(), "key expires by the ttl, pttl=" + pttl);
      }
      assertFalse(lease.toString().contains(token), "a lease never prints its token");
      lease.release();
      assertTrue(nodesWithKey() <= n() - quorum(), "when release returns, a quorum is free");
    }
    awaitNoKeyLeft("and every node soon after");
  }

  @Test
  void keysUseTheConfiguredPrefix() {
    nodes().all().forEach(node -> NodeData.vouchForNewNode(node, "payments/"));
    Redlock redlock = client(config().keyPrefix("payments/").build());
    Lease lease = redlock.tryAcquire(resource(), TTL).orElseThrow();
    await()
        .atMost(NO_HANG)
        .until(
            () ->
                Admin.get(nodes().node(0), "payments/" + resource())
                    != null); // node 0 may answer after the quorum
    assertNull(Admin.get(nodes().node(0), key()));
    lease.release();
    await()
        .atMost(NO_HANG)
        .until(() -> Admin.get(nodes().node(0), "payments/" + resource()) == null);
  }

  // ---- ownership ----------------------------------------------------------------------------

  @Test
  void releaseAndExtendNeverTouchAnotherOwnersKey() {
    Redlock redlock = redlock();
    Lease lease = redlock.tryAcquire(resource(), TTL).orElseThrow();
    // Another owner's token replaces ours on every node (as after an expiry and a new grant).
    nodes().all().forEach(node -> Admin.set(node, key(), "another-owner"));
    assertTrue(lease.isValid(), "locally the lease still looks valid");
    assertFalse(lease.extend(TTL), "extend is owner-checked on the nodes");
    for (RedisNode node : nodes().all()) {
      assertEquals(
          -1, Admin.pttl(node, key()), "extend did not set a ttl on the other owner's key");
    }
    lease.release();
    for (RedisNode node : nodes().all()) {
      assertEquals(
          "another-owner", Admin.get(node, key()), "release did not delete the other owner's key");
    }
  }

  @Test
  void afterExpiryAnotherClientWinsAndTheFirstReleaseLeavesItAlone() {
    Redlock a = redlock();
    Redlock b = redlock();
    Duration shortTtl = TIMING.scaled(Duration.ofMillis(400));
    Lease first = a.tryAcquire(resource(), shortTtl).orElseThrow();
    Lease second =
        await()
            .atMost(NO_HANG)
            .pollInterval(Duration.ofMillis(20))
            .until(() -> b.tryAcquire(resource(), TTL).orElse(null), lease -> lease != null);
    assertFalse(first.isValid(), "the first lease had expired by the time the second was granted");
    assertFalse(first.extend(shortTtl), "an expired lease is never extended");
    // B holds a quorum; a node whose copy of A's key had not quite expired when B asked refused
    // B, so B's token need not be on every node. Wait until B's requests have all settled.
    await()
        .atMost(NO_HANG)
        .until(
            () ->
                second.nodeOutcomes().stream()
                    .noneMatch(o -> o.status() == NodeOutcome.Status.PENDING));
    List<String> before = nodes().all().stream().map(node -> Admin.get(node, key())).toList();
    assertTrue(
        before.stream().filter(java.util.Objects::nonNull).distinct().count() == 1
            && before.stream().filter(java.util.Objects::nonNull).count() >= quorum(),
        "B's token on a quorum: " + before);
    first.release();
    List<String> after = nodes().all().stream().map(node -> Admin.get(node, key())).toList();
    for (int i = 0; i < n(); i++) {
      if (before.get(i) != null) {
        assertEquals(
            before.get(i), after.get(i), "stale release left the new owner's key on node " + i);
      }
    }
    assertTrue(second.isValid());
    second.release();
  }

  @Test
  void extendMovesValidityForwardOnTheNodes() {
    Redlock redlock = redlock();
    Lease lease = redlock.tryAcquire(resource(), shortTtl()).orElseThrow();
    assertTrue(lease.extend(Duration.ofSeconds(30)));
    assertTrue(
        lease.remainingValidity().compareTo(Duration.ofSeconds(20)) > 0,
        "validity was moved forward");
    await()
        .atMost(NO_HANG)
        .until(() -> nodes().all().stream().allMatch(node -> Admin.pttl(node, key()) > 20_000));
    lease.release();
    assertThrows(
        IllegalStateException.class,
        () -> lease.extend(TTL),
        "a released lease cannot be extended");
  }

  @Test
  void releaseIsIdempotentAndSurvivesAScriptFlush() {
    Redlock redlock = redlock();
    Lease lease = redlock.tryAcquire(resource(), TTL).orElseThrow();
    for (RedisNode node : nodes().all()) {
      try (Jedis jedis = Admin.on(node)) {
        jedis.scriptFlush(); // the node forgets our scripts: EVALSHA answers NOSCRIPT
      }
    }
    lease.release();
    awaitNoKeyLeft("release fell back to EVAL after NOSCRIPT");
    lease.release();
    lease.close();
    assertFalse(lease.isValid());
    assertEquals(Duration.ZERO, lease.remainingValidity());
  }

  // ---- rollback ---------------------------------------------------------------------------

  @Test
  void aFailedAttemptLeavesNoKeyBehind() {
    // Another owner holds the key on just enough nodes to block a quorum; we win the rest.
    int blockers = n() - quorum() + 1;
    for (int i = 0; i < blockers; i++) {
      Admin.set(nodes().node(i), key(), "another-owner");
    }
    assertTrue(redlock().tryAcquire(resource(), TTL).isEmpty());
    await("a lost attempt is rolled back")
        .atMost(TTL.dividedBy(2))
        .untilAsserted(
            () -> {
              for (int i = 0; i < n(); i++) {
                String value = Admin.get(nodes().node(i), key());
                assertEquals(
                    i < blockers ? "another-owner" : null,
                    value,
                    "node " + i + " after a lost attempt");
              }
            });
  }

  // ---- faults -------------------------------------------------------------------------------

  @Test
  void stillAcquiresWithAMinorityKilled() throws Exception {
    firstNodes(minority()).forEach(RedisNode::kill);
    Redlock redlock = redlock();
    Lease lease =
        assertTimeoutPreemptively(
            NO_HANG, () -> redlock.acquire(resource(), TTL, TIMING.scaled(Duration.ofSeconds(5))));
    assertTrue(lease.isValid());
    assertEquals(quorum(), nodesWithKey(), "held on every live node");
    lease.release();
    awaitNoKeyLeft("released on every live node");
  }

  @Test
  void stillAcquiresWithAMinorityFrozen() throws Exception {
    firstNodes(minority()).forEach(RedisNode::pause);
    Redlock redlock = redlock();
    for (int round = 0; round < 3; round++) {
      // Each attempt decides on the quorum and does not wait for the frozen nodes.
      Lease lease =
          assertTimeoutPreemptively(
              NO_HANG, () -> redlock.tryAcquire(resource(), TTL).orElseThrow());
      assertTrue(lease.isValid());
      lease.release();
    }
    awaitNoKeyLeft("released on every live node");
  }

  @Test
  void aMajorityDownFailsWithinMaxWaitWithTheNodeAccount() {
    firstNodes(minority() + 1).forEach(RedisNode::kill);
    Redlock redlock = redlock();
    LockUnavailableException e =
        quorumUnreachable(
            () -> redlock.acquire(resource(), TTL, TIMING.scaled(Duration.ofMillis(500))));
    for (int i = 0; i < minority() + 1; i++) {
      NodeOutcome outcome = e.nodeOutcomes().get(i);
      assertEquals(nodes().node(i).uri(), outcome.node());
      assertEquals(NodeOutcome.Status.FAILED, outcome.status());
      assertTrue(outcome.detail().contains("connection refused"), outcome.toString());
      assertTrue(e.getMessage().contains(nodes().node(i).uri()), e.getMessage());
    }
    awaitNoKeyLeft("nothing left on the live nodes");
  }

  @Test
  void aMajorityFrozenFailsWithTimedOutNodesAndLeavesNoKeyOnLiveNodes() {
    firstNodes(minority() + 1).forEach(RedisNode::pause);
    Redlock redlock = redlock();
    LockUnavailableException e = quorumUnreachable(() -> redlock.tryAcquire(resource(), TTL));
    for (int i = 0; i < minority() + 1; i++) {
      assertEquals(NodeOutcome.Status.TIMED_OUT, e.nodeOutcomes().get(i).status(), e.getMessage());
    }
    awaitNoKeyLeft("rolled back on the live nodes");
  }

  // ---- errors and lifecycle -----------------------------------------------------------------

  @Test
  void aWrongPasswordIsReportedPerNodeWithoutThePassword() {
    String password = "right-password";
    for (RedisNode node : nodes().all()) {
      try (Jedis jedis = Admin.on(node)) {
        jedis.configSet("requirepass", password);
      }
    }
    try {
      List<String> wrong =
          nodes().all().stream()
              .map(node -> "redis://:wrong-password@127.0.0.1:" + node.port())
              .toList();
      Redlock redlock =
          client(
              RedlockConfig.builder()
                  .nodes(wrong)
                  .nodeTimeout(TIMING.scaled(Duration.ofMillis(500)))
                  .build());
      LockUnavailableException e =
          assertThrows(LockUnavailableException.class, () -> redlock.tryAcquire(resource(), TTL));
      assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
      for (NodeOutcome outcome : e.nodeOutcomes()) {
        assertTrue(outcome.detail().startsWith("authentication failed"), outcome.toString());
      }
      assertFalse(e.getMessage().contains("wrong-password"), e.getMessage());

      List<String> right =
          nodes().all().stream()
              .map(node -> "redis://:" + password + "@127.0.0.1:" + node.port())
              .toList();
      Redlock authenticated = client(RedlockConfig.builder().nodes(right).build());
      authenticated.tryAcquire(resource(), TTL).orElseThrow().release();
    } finally {
      for (RedisNode node : nodes().all()) {
        try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
          jedis.auth(password);
          jedis.configSet("requirepass", "");
        }
      }
    }
  }

  @Test
  void closeLeavesNoThreadsNoConnectionsAndNoLocks() throws Exception {
    Redlock redlock = Redlock.create(config().build());
    acquireAndReleaseOnFourThreads(redlock, resource(), TTL);
    Lease stillHeld = redlock.tryAcquire(resource(), TTL).orElseThrow();
    assertTrue(
        nodes().all().stream().allMatch(node -> Admin.redlockClients(node) > 0),
        "connections were pooled");
    redlock.close();
    redlock.close(); // idempotent
    assertFalse(stillHeld.isValid(), "close releases what is still held");
    awaitNoKeyLeft("close released the lease on the nodes");
    await()
        .atMost(NO_HANG)
        .untilAsserted(
            () -> {
              for (RedisNode node : nodes().all()) {
                assertEquals(0, Admin.redlockClients(node), "connections left open on " + node);
              }
              assertEquals(
                  List.of(),
                  Thread.getAllStackTraces().keySet().stream()
                      .filter(t -> t.getName().startsWith("redlock-io-"))
                      .map(Thread::getName)
                      .toList());
            });
    assertThrows(IllegalStateException.class, () -> redlock.tryAcquire(resource(), TTL));
    assertThrows(
        IllegalStateException.class, () -> redlock.acquire(resource(), TTL, Duration.ZERO));
  }
}
