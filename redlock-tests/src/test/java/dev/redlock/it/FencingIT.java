package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.FencedWrites;
import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Fencing tokens and the restart guard against real nodes: the two traps of a quorum counter, the
 * paused holder, and a node that restarted empty. Five lock nodes with AOF (so a restart can keep
 * or lose data, as each test chooses), and one more node as the protected resource.
 */
class FencingIT extends RealNodesTest {
  /** Short, so tests can wait out the quarantine; every ttl here is at most this. */
  static final Duration MAX_TTL = Duration.ofSeconds(2);

  RedisNodes resourceStore;

  @Override
  int nodeCount() {
    return 5;
  }

  @Override
  Persistence persistence() {
    return Persistence.AOF;
  }

  @BeforeAll
  void startResourceStore() {
    resourceStore = RedisNodes.start(1);
  }

  @AfterAll
  void stopResourceStore() {
    if (resourceStore != null) {
      resourceStore.close();
    }
  }

  @BeforeEach
  void cleanResourceStore() {
    resourceStore.all().forEach(Admin::flushAll);
  }

  /** A client of the first {@code n} nodes. */
  Redlock client(int n, RedlockConfig.Builder extra) {
    Redlock redlock = Redlock.create(extra.nodes(nodes.uris().subList(0, n)).build());
    clients.add(redlock);
    return redlock;
  }

  static RedlockConfig.Builder settings() {
    return RedlockConfig.builder()
        .nodeTimeout(Duration.ofMillis(100))
        .retryDelay(Duration.ofMillis(20))
        .retryJitter(Duration.ofMillis(20))
        .maxTtl(MAX_TTL);
  }

  /** The fencing counter a node keeps for this test's resource, or 0. */
  long counterOn(RedisNode node) {
    try (Jedis jedis = Admin.on(node)) {
      String value = jedis.hget(RedlockConfig.DEFAULT_KEY_PREFIX + "@fences", key());
      return value == null ? 0 : Long.parseLong(value);
    }
  }

  /** The largest counter among nodes 2, 3 and 4. */
  long othersMax() {
    return Math.max(
        counterOn(nodes.node(2)), Math.max(counterOn(nodes.node(3)), counterOn(nodes.node(4))));
  }

  Lease acquireOn(Redlock redlock) throws InterruptedException {
    return redlock.acquire(resource, Duration.ofSeconds(2), Duration.ofSeconds(10));
  }

  @Test
  void theFirstTokenIsTheNodesClockAndLaterOnesGrowByOne() throws Exception {
    Redlock redlock = client(5, settings());
    long before = System.currentTimeMillis() * 1000;
    long first;
    try (Lease lease = acquireOn(redlock)) {
      first = lease.fencingToken();
    }
    assertTrue(
        first >= before - 5_000_000 && first <= System.currentTimeMillis() * 1000 + 5_000_000,
        "a new counter starts at the node's clock in microseconds: " + first);
    long previous = first;
    for (int i = 0; i < 20; i++) {
      try (Lease lease = acquireOn(redlock)) {
        assertTrue(lease.fencingToken() > previous, lease.fencingToken() + " after " + previous);
        previous = lease.fencingToken();
      }
    }
  }

  @Test
  void partialAttemptsThatBumpAMinorityCannotMakeALaterTokenSmaller() throws Exception {
    Redlock redlock = client(5, settings());
    acquireOn(redlock).release(); // every node has a counter now, equal after write-back
    await()
        .atMost(NO_HANG)
        .until(() -> nodes.all().stream().allMatch(n -> Admin.get(n, key()) == null));

    // 1. Attempts that fail quorum bump only nodes 0 and 1: 2, 3 and 4 are held by someone else.
    for (int i = 2; i <= 4; i++) {
      Admin.set(nodes.node(i), key(), "another-owner");
    }
    // New counters start at each node's own clock, microseconds apart: bump until nodes 0 and 1
    // lead every other node by a margin, so that without the write-back a later token would be
    // smaller.
    for (int attempts = 0;
        attempts < 5
            || Math.min(counterOn(nodes.node(0)), counterOn(nodes.node(1))) <= othersMax() + 2;
        attempts++) {
      assertTrue(attempts < 20_000, "the minority never ran ahead");
      assertTrue(redlock.tryAcquire(resource, Duration.ofSeconds(2)).isEmpty());
    }
    for (int i = 2; i <= 4; i++) {
      try (Jedis jedis = Admin.on(nodes.node(i))) {
        jedis.del(key());
      }
    }

    // 2. A wins on {0, 1, 2}: its token comes from the minority that ran ahead; node 2 lagged.
    nodes.node(3).pause();
    nodes.node(4).pause();
    long tokenA;
    try (Lease a = acquireOn(redlock)) {
      tokenA = a.fencingToken();
      assertEquals(counterOn(nodes.node(0)), tokenA);
      assertTrue(
          counterOn(nodes.node(2)) >= tokenA,
          "the lagging winner was raised before the token was handed out");
    }
    nodes.node(3).resume();
    nodes.node(4).resume();

    // 3. B wins on a different majority {2, 3, 4}: 3 and 4 still lag far behind.
    nodes.node(0).pause();
    nodes.node(1).pause();
    Redlock other = client(5, settings());
    try (Lease b = acquireOn(other)) {
      assertTrue(
          b.fencingToken() > tokenA,
          "token " + b.fencingToken() + " must exceed the earlier " + tokenA);
    }
  }

  @Test
  void aNodeThatLostItsDataStillIssuesALargerTokenAfterItsQuarantine() throws Exception {
    Redlock redlock = client(3, settings());
    acquireOn(redlock).release(); // counters on 0, 1, 2 (each started at its own clock)
    await()
        .atMost(NO_HANG)
        .until(
            () ->
                counterOn(nodes.node(2)) > 0
                    && nodes.all().subList(0, 3).stream()
                        .allMatch(n -> Admin.get(n, key()) == null));

    // A wins on {0, 1} while node 2 is down (killed: a frozen node would run A's queued SET when
    // it thaws and catch up). Counters started microseconds apart, so A keeps acquiring until
    // nodes 0 and 1 are provably ahead of node 2; node 2 comes back with its data, lagging.
    long lagging = counterOn(nodes.node(2));
    nodes.node(2).kill();
    long tokenA = 0;
    for (int attempts = 0; tokenA <= lagging + 1; attempts++) {
      assertTrue(attempts < 20_000, "nodes 0 and 1 never got ahead of node 2");
      try (Lease a = acquireOn(redlock)) {
        tokenA = a.fencingToken();
      }
    }
    nodes.node(2).restart(Persistence.AOF);
    assertEquals(lagging, counterOn(nodes.node(2)), "node 2 kept its counter, and lags");

    nodes
        .node(0)
        .restart(Persistence.NONE); // node 0 forgets everything: lock keys, counters, epoch
    assertEquals(0, counterOn(nodes.node(0)));
    nodes.node(1).pause(); // B can only ever win on {0 (empty), 2 (lagging)}

    // Meet node 0 while node 2 is down: B sees the quarantine, and no attempt bumps node 2 (a
    // bumped node 2 would run ahead and hide what this test is about).
    nodes.node(2).kill();
    Redlock other = client(3, settings());
    LockUnavailableException quarantined =
        org.junit.jupiter.api.Assertions.assertThrows(
            LockUnavailableException.class,
            () -> other.tryAcquire(resource, Duration.ofSeconds(2)));
    assertEquals(
        NodeOutcome.Status.QUARANTINED,
        quarantined.nodeOutcomes().get(0).status(),
        quarantined.getMessage());
    nodes.node(2).restart(Persistence.AOF);
    assertTrue(
        counterOn(nodes.node(2)) < tokenA,
        "node 2 still lags: " + counterOn(nodes.node(2)) + " < " + tokenA);

    // Wait out the quarantine (maxTtl from node 0's first contact), then win once on {0, 2}.
    long quarantineOver = System.nanoTime() + MAX_TTL.plusMillis(300).toNanos();
    await().atMost(NO_HANG).until(() -> System.nanoTime() > quarantineOver);
    Lease b = other.tryAcquire(resource, Duration.ofSeconds(2)).orElseThrow();
    // Node 2 gives lagging + 1 <= tokenA: only node 0's fresh counter, floored at its clock, can
    // make the token larger than every earlier one.
    assertTrue(
        b.fencingToken() > tokenA,
        "token " + b.fencingToken() + " after data loss must exceed " + tokenA);
    b.release();
  }

  @Test
  void aHolderThatPausesPastItsLeaseIsRefusedByTheProtectedResource() throws Exception {
    Redlock first = client(5, settings());
    Redlock second = client(5, settings());
    try (Jedis store = Admin.on(resourceStore.node(0))) {
      Lease a = first.acquire(resource, Duration.ofMillis(600), Duration.ofSeconds(5));
      long tokenA = a.fencingToken();
      // A "GC pause": A stops here, past the end of its lease.
      await().atMost(NO_HANG).until(() -> !a.isValid());
      Lease b = second.acquire(resource, Duration.ofSeconds(2), Duration.ofSeconds(10));
      assertTrue(b.fencingToken() > tokenA);
      assertTrue(
          FencedWrites.setIfNewer(store, "ledger:balance", "written by B", b.fencingToken()));
      // A wakes up and writes with its old token, believing it still holds the lock.
      assertFalse(
          FencedWrites.setIfNewer(store, "ledger:balance", "stale write by A", tokenA),
          "the stale write is refused");
      assertEquals(Optional.of("written by B"), FencedWrites.get(store, "ledger:balance"));
      assertEquals(b.fencingToken(), FencedWrites.lastToken(store, "ledger:balance"));
      b.release();
      a.release();
    }
  }

  @Test
  void aNodeRestartedEmptyCannotGrantASecondHolderUntilMaxTtlHasPassed() throws Exception {
    Lease a = holdOnABareMajorityThenRestartNodeZeroEmpty();
    Redlock b = client(3, settings());
    // While A is valid, B must not win: node 0 forgot A's key but is quarantined.
    LockUnavailableException refused =
        org.junit.jupiter.api.Assertions.assertThrows(
            LockUnavailableException.class, () -> b.tryAcquire(resource, MAX_TTL));
    assertEquals(
        NodeOutcome.Status.QUARANTINED,
        refused.nodeOutcomes().get(0).status(),
        refused.getMessage());
    List<Long> bWonWhileAValid = new ArrayList<>();
    Lease bLease =
        await()
            .atMost(NO_HANG)
            .pollInterval(Duration.ofMillis(50))
            .ignoreException(LockUnavailableException.class)
            .until(
                () -> {
                  Optional<Lease> won = b.tryAcquire(resource, MAX_TTL);
                  if (won.isPresent() && a.isValid()) {
                    bWonWhileAValid.add(won.get().fencingToken());
                  }
                  return won.orElse(null);
                },
                lease -> lease != null);
    assertEquals(List.of(), bWonWhileAValid, "B was granted the lock while A still held it");
    bLease.release();
  }

  @Test
  void withTheGuardOffTheSameRestartGrantsTheLockTwice() throws Exception {
    Lease a = holdOnABareMajorityThenRestartNodeZeroEmpty();
    Redlock unguarded = client(3, settings().unsafeDisableRestartGuardForTesting());
    Lease b =
        unguarded
            .tryAcquire(resource, MAX_TTL)
            .orElseThrow(
                () ->
                    new AssertionError(
                        "without the guard, the emptied node grants the lock again"));
    assertTrue(
        a.isValid() && b.isValid(),
        "double grant: both leases valid at once — what the guard prevents");
    b.release();
  }

  /**
   * A holds on exactly {0, 1}; then node 0 restarts without its data. Node 2 is down (killed, not
   * frozen: a frozen node would run A's queued SET when it thaws) during the grant, and comes back
   * with its data (AOF), which never had A's key.
   */
  private Lease holdOnABareMajorityThenRestartNodeZeroEmpty() throws InterruptedException {
    Redlock holder = client(3, settings());
    nodes.node(2).kill();
    Lease a = holder.acquire(resource, MAX_TTL, Duration.ofSeconds(5));
    nodes.node(2).restart(Persistence.AOF);
    assertEquals(null, Admin.get(nodes.node(2), key()), "node 2 never saw A");
    await().atMost(NO_HANG).until(() -> Admin.get(nodes.node(1), key()) != null);
    nodes.node(0).restart(Persistence.NONE);
    assertTrue(a.isValid(), "A still holds its lease after the restart");
    return a;
  }
}
