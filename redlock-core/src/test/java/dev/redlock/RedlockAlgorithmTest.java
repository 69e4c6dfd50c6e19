package dev.redlock;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.config.RedlockConfig;
import dev.redlock.timing.Ticker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The algorithm over fake nodes and a fake clock: counting, validity, rollback, reasons, bad input.
 */
class RedlockAlgorithmTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private final FakeCluster cluster = new FakeCluster();
  private final AtomicLong clock = cluster.clock;
  private final List<FakeNode> nodes = cluster.nodes;

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  private Redlock redlock(int n, Duration nodeTimeout, Ticker ticker) {
    RedlockConfig.Builder config =
        RedlockConfig.builder()
            .nodeTimeout(nodeTimeout)
            .retryDelay(Duration.ofMillis(1))
            .retryJitter(Duration.ZERO);
    return cluster.start(n, config, ticker);
  }

  private Redlock redlock(int n) {
    return redlock(n, Duration.ofSeconds(1), clock::get);
  }

  @Test
  void validityIsTtlMinusElapsedMinusDrift() {
    Redlock lock = redlock(1);
    nodes.get(0).latencyNanos = Duration.ofMillis(400).toNanos();
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow();
    // 10 000 ms ttl - 400 ms elapsed - (1% of ttl + 2 ms) drift
    assertEquals(Duration.ofMillis(10_000 - 400 - 102), lease.remainingValidity());
    clock.addAndGet(Duration.ofMillis(9_497).toNanos());
    assertTrue(lease.isValid());
    clock.addAndGet(Duration.ofMillis(1).toNanos());
    assertFalse(lease.isValid(), "invalid at the exact end of validity");
    assertEquals(Duration.ZERO, lease.remainingValidity());
  }

  @Test
  void extendCountsFromItsOwnStartAndNeverRevivesAnExpiredLease() {
    Redlock lock = redlock(1); // one node: no straggler can be counted after the baseline below
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow();
    clock.addAndGet(Duration.ofSeconds(5).toNanos());
    assertTrue(lease.extend(Duration.ofSeconds(20)));
    assertEquals(Duration.ofMillis(20_000 - 202), lease.remainingValidity());
    clock.addAndGet(Duration.ofSeconds(30).toNanos());
    int callsBefore = nodes.stream().mapToInt(n -> n.calls.get()).sum();
    assertFalse(lease.extend(TTL), "expired: not extended");
    assertEquals(
        callsBefore, nodes.stream().mapToInt(n -> n.calls.get()).sum(), "and no node was asked");
  }

  @Test
  void winsOnAQuorumWithoutWaitingForAHangingMinority() {
    Redlock lock = redlock(5, Duration.ofSeconds(30), Ticker.SYSTEM);
    nodes.get(0).mode = FakeNode.Mode.HANG;
    nodes.get(1).mode = FakeNode.Mode.HANG;
    // The hanging nodes would hold the attempt for 10 s; the quorum decides long before.
    Lease lease =
        assertTimeoutPreemptively(
            Duration.ofSeconds(5), () -> lock.tryAcquire("r", Duration.ofMinutes(1)).orElseThrow());
    assertTrue(lease.isValid());
  }

  /**
   * The waiting thread must not block on a silent node while the others' replies arrive: here the
   * hanging node is the one it looks at first (all nodes equally fast so far, it comes first), and
   * the healthy replies are not there yet at the first look. Before the fix the thread read the
   * hanging node until its timeout and lost the attempt with a quorum in the socket buffers.
   */
  @Test
  void aSilentNodeDoesNotHideTheOthersReplies() {
    Redlock lock = redlock(3, Duration.ofSeconds(30), Ticker.SYSTEM);
    nodes.get(0).mode = FakeNode.Mode.SILENT;
    nodes.get(1).pollsBeforeReady = 2;
    nodes.get(2).pollsBeforeReady = 2;
    Lease lease =
        assertTimeoutPreemptively(
            Duration.ofSeconds(5), () -> lock.tryAcquire("r", Duration.ofMinutes(1)).orElseThrow());
    assertTrue(lease.isValid());
    assertEquals(
        2, lease.nodeOutcomes().stream().filter(o -> o.status() == NodeOutcome.Status.OK).count());
  }

  /**
   * The caller writes inline only to nodes with an idle connection: connecting to a frozen node
   * (the handshake never answered) must happen on an I/O thread, or it holds up the other writes.
   */
  @Test
  void connectingToAFrozenNodeDoesNotHoldUpTheCaller() {
    Redlock lock = redlock(3, Duration.ofSeconds(30), Ticker.SYSTEM);
    nodes.get(0).connectHangs = true;
    Lease lease =
        assertTimeoutPreemptively(
            Duration.ofSeconds(5), () -> lock.tryAcquire("r", Duration.ofMinutes(1)).orElseThrow());
    assertTrue(lease.isValid());
  }

  /**
   * A release a node did not confirm is sent again until it is: here node 0 is down when the lease
   * is released, so its key (an orphan, like a SET a frozen node runs when it thaws) stays; once
   * the node is back, the key goes, long before its ttl.
   */
  @Test
  void anUnconfirmedReleaseIsSentAgainUntilTheNodeConfirmsIt() {
    Redlock lock = redlock(3, Duration.ofMillis(50), Ticker.SYSTEM);
    Lease lease = lock.tryAcquire("r", Duration.ofMinutes(1)).orElseThrow();
    FakeNode node0 = nodes.get(0);
    node0.mode = FakeNode.Mode.DOWN;
    lease.release();
    assertTrue(node0.keys.containsKey("redlock:r"), "node 0 missed the release");
    node0.mode = FakeNode.Mode.UP;
    await().atMost(Duration.ofSeconds(10)).until(() -> !node0.keys.containsKey("redlock:r"));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> node0.releases.get() >= 2); // confirmed twice
    assertFalse(nodes.get(1).keys.containsKey("redlock:r"));
  }

  @Test
  void aLostAttemptReleasesOnlyWhereItMayHoldTheToken() {
    Redlock lock = redlock(5);
    for (int i = 0; i < 3; i++) {
      nodes.get(i).keys.put("redlock:r", "another-owner");
    }
    assertTrue(lock.tryAcquire("r", TTL).isEmpty(), "held elsewhere on a majority");
    for (int i = 0; i < 5; i++) {
      FakeNode node = nodes.get(i);
      if (i < 3) {
        assertEquals(
            0, node.releases.get(), "node " + i + " refused SET NX: our token was never there");
        assertEquals("another-owner", node.keys.get("redlock:r"));
      } else {
        assertEquals(1, node.releases.get(), "node " + i + " said yes: rolled back");
        assertFalse(node.keys.containsKey("redlock:r"));
      }
    }
  }

  @Test
  void aQuorumWonAfterTheValidityRanOutIsGivenBackAndSaysSo() {
    Redlock lock = redlock(3);
    nodes.forEach(n -> n.latencyNanos = Duration.ofSeconds(4).toNanos()); // 12 s > a 10 s ttl
    LockUnavailableException e =
        assertThrows(LockUnavailableException.class, () -> lock.tryAcquire("r", TTL));
    assertEquals(LockUnavailableException.Reason.VALIDITY_EXPIRED, e.reason(), e.getMessage());
    // Given back: the releases of nodes this slow go out on I/O threads, after a quorum of them.
    await("every node given back")
        .atMost(Duration.ofSeconds(10))
        .until(() -> nodes.stream().noneMatch(n -> n.keys.containsKey("redlock:r")));
  }

  @Test
  void aMajorityDownIsQuorumUnreachableWithTheNodeAccount() {
    Redlock lock = redlock(5);
    for (int i = 0; i < 3; i++) {
      nodes.get(i).mode = FakeNode.Mode.DOWN;
    }
    LockUnavailableException e =
        assertThrows(LockUnavailableException.class, () -> lock.tryAcquire("r", TTL));
    assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
    assertEquals(1, e.attempts());
    assertEquals(3, e.getSuppressed().length, "each node's error is kept");
    for (int i = 0; i < 3; i++) {
      assertEquals(NodeOutcome.Status.FAILED, e.nodeOutcomes().get(i).status());
      assertTrue(
          e.nodeOutcomes().get(i).detail().startsWith("connection refused"),
          e.nodeOutcomes().get(i).toString());
    }
    assertTrue(
        e.getMessage().contains("could not acquire 'r' (quorum unreachable)"), e.getMessage());
    assertTrue(
        e.getMessage().contains("redis://fake:7001 FAILED (connection refused"), e.getMessage());
    assertTrue(
        nodes.stream().allMatch(n -> n.keys.isEmpty()), "rolled back on the nodes that said yes");
  }

  @Test
  void heldElsewhereOnlyWhenRefusalsAloneRuleOutAQuorum() {
    Redlock lock = redlock(5);
    nodes.get(0).keys.put("redlock:r", "another-owner");
    nodes.get(1).keys.put("redlock:r", "another-owner");
    nodes.get(2).mode = FakeNode.Mode.DOWN;
    // Two refusals and one failure: the outage was needed to block us, so it is not mere
    // contention.
    assertEquals(
        LockUnavailableException.Reason.QUORUM_UNREACHABLE,
        assertThrows(LockUnavailableException.class, () -> lock.tryAcquire("r", TTL)).reason());
    nodes.get(2).mode = FakeNode.Mode.UP;
    nodes.get(2).keys.put("redlock:r", "another-owner");
    nodes.get(3).mode = FakeNode.Mode.DOWN;
    // Three refusals of five: held elsewhere, whatever the other nodes say.
    assertTrue(lock.tryAcquire("r", TTL).isEmpty());
  }

  @Test
  void acquireGivesUpWhenMaxWaitIsSpent() {
    Redlock lock = redlock(1, Duration.ofMillis(50), Ticker.SYSTEM);
    nodes.get(0).keys.put("redlock:r", "another-owner");
    LockUnavailableException e =
        assertTimeoutPreemptively(
            Duration.ofSeconds(10),
            () ->
                assertThrows(
                    LockUnavailableException.class,
                    () -> lock.acquire("r", TTL, Duration.ofMillis(100))));
    assertEquals(LockUnavailableException.Reason.HELD_ELSEWHERE, e.reason());
    assertTrue(e.attempts() >= 2, "retried: " + e.attempts());
  }

  @Test
  void badInputFailsEarlyAndTouchesNoNode() {
    Redlock lock = redlock(1); // one node: no straggler can be counted after the baseline below
    assertThrows(
        NullPointerException.class, () -> lock.tryAcquire(null, TTL), "resource must not be null");
    assertEquals(
        "resource must not be blank, was ' '",
        assertThrows(IllegalArgumentException.class, () -> lock.tryAcquire(" ", TTL)).getMessage());
    assertEquals(
        "ttl must not be null",
        assertThrows(NullPointerException.class, () -> lock.tryAcquire("r", null)).getMessage());
    assertEquals(
        "ttl must be > 0, was PT0S",
        assertThrows(IllegalArgumentException.class, () -> lock.tryAcquire("r", Duration.ZERO))
            .getMessage());
    assertEquals(
        "ttl must be > 0, was PT-1S",
        assertThrows(
                IllegalArgumentException.class, () -> lock.tryAcquire("r", Duration.ofSeconds(-1)))
            .getMessage());
    assertEquals(
        "ttl must be > nodeTimeout + clock drift (1000ms + 12ms), was PT1S",
        assertThrows(
                IllegalArgumentException.class, () -> lock.tryAcquire("r", Duration.ofSeconds(1)))
            .getMessage());
    assertTrue(
        assertThrows(
                IllegalArgumentException.class,
                () -> lock.tryAcquire("r", Duration.ofNanos(10_000_000_500L)))
            .getMessage()
            .startsWith("ttl must be a whole number of milliseconds"));
    assertTrue(
        assertThrows(
                IllegalArgumentException.class, () -> lock.tryAcquire("r", Duration.ofMinutes(2)))
            .getMessage()
            .startsWith("ttl must be <= maxTtl (PT1M), was PT2M"));
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> lock.tryAcquire("@witness", TTL))
            .getMessage()
            .startsWith("resource must not start with '@'"));
    // With an empty (or shorter) prefix, these would be another prefix's life marker, witness,
    // a fencing counter, or read-write lock keys: "redlock:" + "@life", ...; and "ledger@fence"
    // would be the counter of "ledger" under any prefix.
    for (String other :
        List.of(
            "redlock:@life",
            "redlock:@witness",
            "ledger@fence",
            "redlock:ledger@fence",
            "redlock:@rw:w:ledger",
            "redlock:@rw:r:ledger")) {
      assertTrue(
          assertThrows(IllegalArgumentException.class, () -> lock.tryAcquire(other, TTL))
              .getMessage()
              .contains(
                  "or end with '@fence', '@life' or '@witness' (the nodes' own keys), was '"
                      + other),
          other);
    }
    lock.tryAcquire("payout:user@example.com", TTL).orElseThrow().release(); // other '@'s are fine
    assertEquals(
        "maxWait must be >= 0, was PT-1S",
        assertThrows(
                IllegalArgumentException.class,
                () -> lock.acquire("r", TTL, Duration.ofSeconds(-1)))
            .getMessage());
    assertEquals(
        "maxWait must not be null",
        assertThrows(NullPointerException.class, () -> lock.acquire("r", TTL, null)).getMessage());
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow();
    int calls = nodes.stream().mapToInt(n -> n.calls.get()).sum();
    assertThrows(IllegalArgumentException.class, () -> lease.extend(Duration.ZERO));
    assertThrows(NullPointerException.class, () -> lease.extend(null));
    assertEquals(calls, nodes.stream().mapToInt(n -> n.calls.get()).sum(), "no node was asked");
  }

  @Test
  void quarantinedNodesTakeNoKeyAndCountAsUnreachable() {
    Redlock lock = redlock(3);
    nodes.get(0).quarantinedMillis = 30_000;
    nodes.get(1).quarantinedMillis = 30_000;
    LockUnavailableException e =
        assertThrows(LockUnavailableException.class, () -> lock.tryAcquire("r", TTL));
    assertEquals(
        LockUnavailableException.Reason.QUORUM_UNREACHABLE,
        e.reason(),
        "quarantine is not contention");
    assertEquals(NodeOutcome.Status.QUARANTINED, e.nodeOutcomes().get(0).status());
    assertTrue(
        e.nodeOutcomes().get(0).detail().contains("30000 ms"), e.nodeOutcomes().get(0).detail());
    assertEquals(
        0,
        nodes.get(0).releases.get(),
        "a quarantined node took no key, so nothing to roll back there");
    nodes.get(1).quarantinedMillis = 0;
    assertTrue(
        lock.tryAcquire("r", TTL).isPresent(),
        "a majority without the quarantined node still wins");
  }

  @Test
  void theTokenIsTheLargestCounterAndLaggingWinnersAreRaisedFirst() {
    Redlock lock = redlock(3);
    nodes.get(0).fences.put("redlock:r", 41L); // node 0 ran ahead (say, through partial attempts)
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow();
    assertEquals(42, lease.fencingToken());
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                nodes.stream().filter(n -> n.fences.getOrDefault("redlock:r", 0L) >= 42).count()
                    >= 2);
    lease.release();
    Lease next = lock.tryAcquire("r", TTL).orElseThrow();
    assertTrue(next.fencingToken() > 42);
  }

  @Test
  void winnersWhoseTokenIsTheirClockAreRaisedByTheReleaseNotBeforeTheGrant() {
    Redlock lock = redlock(3);
    long base = 1_000_000_000L;
    for (int i = 0; i < 3; i++) {
      long skew = i * 500; // node 2's clock is 1 ms ahead: it gives the largest token
      nodes.get(i).clockMicros = () -> base + skew;
    }
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow();
    assertEquals(base + 1000, lease.fencingToken());
    assertEquals(
        base, nodes.get(0).fences.get("redlock:r"), "lagging by less than the ttl: no raise yet");
    lease.release();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> nodes.stream().allMatch(n -> n.fences.get("redlock:r") >= base + 1000));
    nodes.get(2).mode = FakeNode.Mode.DOWN; // the next grant cannot take its token from node 2
    Lease next = lock.tryAcquire("r", TTL).orElseThrow();
    assertEquals(base + 1001, next.fencingToken(), "the released counters were raised");
  }

  @Test
  void aWinnerLaggingByAWholeTtlIsRaisedBeforeTheGrant() {
    Redlock lock = redlock(3);
    long base = 1_000_000_000L;
    nodes.get(0).clockMicros = () -> base;
    nodes.get(1).clockMicros = () -> base;
    nodes.get(2).clockMicros = () -> base + TTL.toNanos() / 1000 + 1; // a ttl ahead
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow();
    long token = lease.fencingToken();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> nodes.stream().filter(n -> n.fences.get("redlock:r") >= token).count() >= 2);
  }

  @Test
  void closeReleasesWhatIsHeldAndRefusesNewWork() {
    Redlock lock = redlock(3);
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow();
    lock.close();
    assertFalse(lease.isValid());
    assertTrue(nodes.stream().allMatch(n -> n.keys.isEmpty()), "released on every node");
    assertEquals(
        "this Redlock is closed",
        assertThrows(IllegalStateException.class, () -> lock.tryAcquire("r", TTL)).getMessage());
    assertThrows(
        IllegalStateException.class, () -> lease.extend(TTL), "the lease was released by close");
    lease.close(); // idempotent, no error
    lock.close();
  }

  /**
   * Once {@code isValid()} said false it never says true again: a reply to an extend sent while the
   * lease was valid, arriving after its validity ran out, does not bring it back. Planted (the
   * reply applied whenever it is not lost yet): valid again.
   */
  @Test
  void aLateExtendReplyNeverBringsBackALeaseSeenInvalid() {
    Redlock lock = redlock(3);
    Lease lease = lock.tryAcquire("r", Duration.ofSeconds(10)).orElseThrow();
    long sentAt = clock.get();
    clock.addAndGet(Duration.ofSeconds(11).toNanos());
    assertFalse(lease.isValid());
    ManagedLease<?> managed = (ManagedLease<?>) lease;
    long longer = sentAt + Duration.ofSeconds(20).toNanos(); // what the late reply would give
    assertFalse(managed.extended(sentAt, longer), "refused");
    assertFalse(lease.isValid(), "still invalid");
    assertEquals(Duration.ZERO, lease.remainingValidity());
  }
}
