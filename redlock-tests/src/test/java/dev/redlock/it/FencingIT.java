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
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * Fencing tokens and the restart guard against real nodes: the two traps of a quorum counter, the
 * paused holder, and a node that restarted empty. Five lock nodes with AOF (so a restart can keep
 * or lose data, as each test chooses), and one more node as the protected resource.
 */
class FencingIT extends RealNodesTest {
  FencingIT() {
    super(RedisFixture.nodes(5).persistence(Persistence.AOF));
  }

  /** Short, so tests can wait out the quarantine; every ttl here is at most this. */
  static final Duration MAX_TTL = Duration.ofSeconds(2);

  /** The protected resource: one more node, emptied and vouched for before each test too. */
  @RegisterExtension
  final RedisFixture resourceStore = RedisFixture.perClass(RedisFixture.nodes(1));

  /** A client of the first {@code n} nodes. */
  Redlock client(int n, RedlockConfig.Builder extra) {
    return client(extra.nodes(nodes.uris().subList(0, n)).build());
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
    String value = Admin.get(node, fenceKey());
    return value == null ? 0 : Long.parseLong(value);
  }

  String fenceKey() {
    return RedlockConfig.DEFAULT_KEY_PREFIX + resource() + "@fence";
  }

  /** The node's clock in µs. */
  static long clockOf(RedisNode node) {
    try (Jedis jedis = Admin.on(node)) {
      List<String> time = jedis.time();
      return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
    }
  }

  Lease acquireOn(Redlock redlock) throws InterruptedException {
    return redlock.acquire(resource(), Duration.ofSeconds(2), Duration.ofSeconds(10));
  }

  @Test
  void tokensAreAtLeastTheNodesClockAndStrictlyGrow() throws Exception {
    Redlock redlock = client(5, settings());
    long before = clockOf(nodes.node(0));
    long previous;
    try (Lease lease = acquireOn(redlock)) {
      previous = lease.fencingToken();
    }
    assertTrue(
        previous >= before && previous <= clockOf(nodes.node(0)),
        "a token is a node's clock in microseconds: " + previous + " vs " + before);
    for (int i = 0; i < 50; i++) {
      try (Lease lease = acquireOn(redlock)) {
        assertTrue(lease.fencingToken() > previous, lease.fencingToken() + " after " + previous);
        previous = lease.fencingToken();
      }
    }
  }

  /**
   * Trap 1 of docs/fencing.md: a minority whose counters run ahead of the clocks (as a node with a
   * fast clock leaves them, through releases) gives A its token; unless the lagging winner is
   * raised before the token is handed out, B on another majority would get a smaller one.
   */
  @Test
  void countersAheadOnAMinorityCannotMakeALaterTokenSmaller() throws Exception {
    Redlock redlock = client(5, settings());
    long ahead = clockOf(nodes.node(0)) + 30_000_000; // 30 s ahead: far more than the 2 s ttl
    for (int i = 0; i <= 1; i++) {
      try (Jedis jedis = Admin.on(nodes.node(i))) {
        jedis.psetex(fenceKey(), 60_000, Long.toString(ahead));
      }
    }
    // A wins on {0, 1, 2}: its token comes from the minority that ran ahead; node 2 lags.
    nodes.node(3).pause();
    nodes.node(4).pause();
    long tokenA;
    Lease a = acquireOn(redlock);
    tokenA = a.fencingToken();
    assertEquals(ahead + 1, tokenA);
    assertTrue(
        counterOn(nodes.node(2)) >= tokenA,
        "the lagging winner was raised before the token was handed out");
    // A's lease ends without a release (its holder crashed): only the raise protects B.
    nodes.node(0).pause();
    nodes.node(1).pause();
    nodes.node(3).resume();
    nodes.node(4).resume();
    await().atMost(NO_HANG).until(() -> !a.isValid() && Admin.get(nodes.node(2), key()) == null);
    Redlock other = client(5, settings());
    try (Lease b = acquireOn(other)) {
      assertTrue(
          b.fencingToken() > tokenA,
          "token " + b.fencingToken() + " must exceed the earlier " + tokenA);
    }
  }

  @Test
  void theReleaseRaisesEveryWinnerThatLaggedToTheTokenHandedOut() throws Exception {
    Redlock redlock = client(5, settings());
    long token;
    try (Lease lease = acquireOn(redlock)) {
      token = lease.fencingToken();
    }
    await()
        .atMost(NO_HANG)
        .until(
            () ->
                nodes.all().stream()
                    .allMatch(
                        n ->
                            Admin.get(n, fenceKey()) != null
                                && Long.parseLong(Admin.get(n, fenceKey())) >= token));
  }

  @Test
  void aNodeThatLostItsDataStillIssuesALargerTokenAfterItsQuarantine() throws Exception {
    Redlock redlock = client(3, settings());
    long tokenA = 0;
    for (int i = 0; i < 20; i++) {
      try (Lease a = acquireOn(redlock)) {
        tokenA = a.fencingToken();
      }
    }
    nodes.node(0).restart(Persistence.NONE); // forgets everything: lock keys, counters, marker
    assertEquals(0, counterOn(nodes.node(0)));
    nodes.node(1).pause(); // B can only ever win on {0 (empty), 2}
    try (Jedis jedis = Admin.on(nodes.node(2))) {
      jedis.del(fenceKey()); // and node 2's counter is gone too (expired, or deleted by hand)
    }
    Redlock other = client(3, settings());
    LockUnavailableException quarantined =
        org.junit.jupiter.api.Assertions.assertThrows(
            LockUnavailableException.class,
            () -> other.tryAcquire(resource(), Duration.ofSeconds(2)));
    assertEquals(
        NodeOutcome.Status.QUARANTINED,
        quarantined.nodeOutcomes().get(0).status(),
        quarantined.getMessage());
    long quarantineOver = System.nanoTime() + MAX_TTL.plusMillis(300).toNanos();
    await().atMost(NO_HANG).until(() -> System.nanoTime() > quarantineOver);
    Lease b = other.tryAcquire(resource(), Duration.ofSeconds(2)).orElseThrow();
    // No node has a counter left: only the clock floor makes the token larger.
    assertTrue(
        b.fencingToken() > tokenA,
        "token " + b.fencingToken() + " after data loss must exceed " + tokenA);
    b.release();
  }

  /** What an operator's DEL (or the counter's own expiry) of every counter can do: nothing. */
  @Test
  void deletingTheCountersOnEveryNodeNeverMakesATokenGoBack() throws Exception {
    Redlock redlock = client(5, settings());
    long previous = 0;
    for (int i = 0; i < 100; i++) {
      try (Lease lease = acquireOn(redlock)) {
        assertTrue(lease.fencingToken() > previous, lease.fencingToken() + " after " + previous);
        previous = lease.fencingToken();
      }
      for (RedisNode node : nodes.all()) {
        try (Jedis jedis = Admin.on(node)) {
          jedis.del(fenceKey());
        }
      }
    }
  }

  /** Node state is bounded by the resources locked in the last maxTtl, not by every one ever. */
  @Test
  void countersOfResourcesNotLockedForMaxTtlGoAwayByThemselves() throws Exception {
    Redlock redlock = client(3, settings());
    int resources = 3_000;
    long[] lockedAt = new long[resources];
    for (int i = 0; i < resources; i++) {
      lockedAt[i] = System.nanoTime();
      redlock.tryAcquire("payment:" + i, Duration.ofSeconds(1)).orElseThrow().release();
    }
    // Each counter lives maxTtl from its resource's lock, so those locked within the last maxTtl
    // (less a margin for the nodes' expiry) must be there; on a slow machine the loop itself may
    // outlast maxTtl, and the first ones have rightly gone already.
    for (RedisNode node : nodes.all().subList(0, 3)) {
      long surely = System.nanoTime() - MAX_TTL.toNanos() + TimeUnit.MILLISECONDS.toNanos(200);
      long recent = java.util.Arrays.stream(lockedAt).filter(t -> t - surely > 0).count();
      long counters = fenceKeysOn(node);
      assertTrue(recent > 0, "the loop outlasted maxTtl by far: nothing left to count");
      assertTrue(
          counters >= recent,
          "one counter per resource locked in the last maxTtl: "
              + counters
              + " < "
              + recent
              + " on "
              + node);
    }
    await()
        .atMost(MAX_TTL.multipliedBy(3).plus(NO_HANG))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> nodes.all().subList(0, 3).stream().allMatch(n -> dbSize(n) <= 2));
  }

  static long fenceKeysOn(RedisNode node) {
    try (Jedis jedis = Admin.on(node)) {
      return jedis.keys(RedlockConfig.DEFAULT_KEY_PREFIX + "*@fence").size();
    }
  }

  static long dbSize(RedisNode node) {
    try (Jedis jedis = Admin.on(node)) {
      return jedis.dbSize(); // the life marker is all that stays
    }
  }

  @Test
  void aHolderThatPausesPastItsLeaseIsRefusedByTheProtectedResource() throws Exception {
    Redlock first = client(5, settings());
    Redlock second = client(5, settings());
    try (Jedis store = Admin.on(resourceStore.nodes().node(0))) {
      Lease a = first.acquire(resource(), Duration.ofMillis(600), Duration.ofSeconds(5));
      long tokenA = a.fencingToken();
      // A "GC pause": A stops here, past the end of its lease.
      await().atMost(NO_HANG).until(() -> !a.isValid());
      Lease b = second.acquire(resource(), Duration.ofSeconds(2), Duration.ofSeconds(10));
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
            LockUnavailableException.class, () -> b.tryAcquire(resource(), MAX_TTL));
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
                  Optional<Lease> won = b.tryAcquire(resource(), MAX_TTL);
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
    Redlock unguarded = client(3, settings().restartGuard(RestartGuard.OFF));
    Lease b =
        unguarded
            .tryAcquire(resource(), MAX_TTL)
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
    Lease a = holder.acquire(resource(), MAX_TTL, Duration.ofSeconds(5));
    nodes.node(2).restart(Persistence.AOF);
    assertEquals(null, Admin.get(nodes.node(2), key()), "node 2 never saw A");
    await().atMost(NO_HANG).until(() -> Admin.get(nodes.node(1), key()) != null);
    nodes.node(0).restart(Persistence.NONE);
    assertTrue(a.isValid(), "A still holds its lease after the restart");
    return a;
  }

  /**
   * Prefix {@code lock} with resource {@code :x} and prefix {@code lock:} with resource {@code x}
   * spell one lock key: they are one lock with one fencing counter. Tokens drawn after a forced
   * release under one spelling (which runs the counter ahead of the clocks) stay above under the
   * other. Planted (the counter named by prefix and resource, as before): the second spelling's
   * token comes from the clock, below the first's.
   */
  @Test
  void twoSpellingsOfOneLockKeyShareTheLockAndItsCounter() throws Exception {
    String tail = resource().replace(':', '-');
    RedlockConfig.Builder first = settings().keyPrefix("lock").restartGuard(RestartGuard.OFF);
    RedlockConfig.Builder second = settings().keyPrefix("lock:").restartGuard(RestartGuard.OFF);
    Redlock a = client(3, first);
    Redlock b = client(3, second);
    try (Lease held = a.acquire(":" + tail, MAX_TTL, NO_HANG)) {
      assertEquals(Optional.empty(), b.tryAcquire(tail, MAX_TTL), "one lock, held");
      try (dev.redlock.admin.RedlockAdmin admin =
          dev.redlock.admin.RedlockAdmin.create(
              settings().keyPrefix("lock").nodes(nodes.uris().subList(0, 3)).build())) {
        admin.forceRelease(":" + tail, "FencingIT"); // counters raised past the clocks
      }
      assertTrue(held.isValid(), "A is not told; its release finds nothing");
    }
    long ahead;
    try (Lease lease = a.acquire(":" + tail, MAX_TTL, NO_HANG)) {
      ahead = lease.fencingToken();
    }
    try (Lease lease = b.acquire(tail, MAX_TTL, NO_HANG)) {
      assertTrue(lease.fencingToken() > ahead, lease.fencingToken() + " after " + ahead);
    }
  }
}
