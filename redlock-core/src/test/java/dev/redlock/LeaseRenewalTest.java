package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.config.RedlockConfig;
import dev.redlock.config.TaskInterruption;
import dev.redlock.timing.Ticker;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Renewal and loss over fake nodes on the real clock: the deadline path, callbacks, and the rules.
 */
class LeaseRenewalTest {
  private static final Duration TTL = Duration.ofMillis(600);
  private final FakeCluster cluster = new FakeCluster();
  private final List<FakeNode> nodes = cluster.nodes;

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  private Redlock redlock(RedlockConfig.Builder config) {
    return cluster.start(3, config, Ticker.SYSTEM);
  }

  private Redlock redlock() {
    return redlock(RedlockConfig.builder().nodeTimeout(Duration.ofMillis(100)));
  }

  @Test
  void renewalsThatNeverAnswerStillLoseTheLeaseWhenValidityRunsOut() throws Exception {
    Redlock lock = redlock();
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow().keepAlive();
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    lease.onLost(lost::complete);
    // Two of three nodes now hang far past nodeTimeout: no renewal can ever be decided.
    nodes.get(0).mode = FakeNode.Mode.HANG;
    nodes.get(1).mode = FakeNode.Mode.HANG;
    long hungAt = System.nanoTime();
    LeaseLostException loss = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> lost.get());
    // A renewal nobody answers is decided at the node timeout by a timer of its own and tried
    // again; the last try or the lease's deadline ends it, by the end of its validity.
    assertTrue(
        loss.reason() == LeaseLostException.Reason.RENEWAL_FAILED
            || loss.reason() == LeaseLostException.Reason.EXPIRED,
        loss.getMessage());
    assertFalse(lease.isValid());
    assertTrue(
        System.nanoTime() - hungAt < TTL.plusMillis(400).toNanos(),
        "signalled by the end of validity");
  }

  /** Renewals tried again every 20-40 ms after a round that missed the quorum. */
  private Redlock quickRetries() {
    return redlock(
        RedlockConfig.builder()
            .nodeTimeout(Duration.ofMillis(100))
            .retryDelay(Duration.ofMillis(20))
            .retryJitter(Duration.ofMillis(20)));
  }

  /**
   * A majority down for a renewal round and the tries after it: each misses the quorum, the lease
   * keeps its validity (a failed extend shortens nothing), the renewal is tried again, and once the
   * nodes answer the lease lives on. Planted (a round that misses the quorum loses the lease):
   * lost.
   */
  @Test
  void aMajoritySilentForOneRenewalRoundLeavesTheLeaseValid() {
    Redlock lock = quickRetries();
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow().keepAlive();
    AtomicInteger losses = new AtomicInteger();
    lease.onLost(e -> losses.incrementAndGet());
    int before = nodes.get(0).calls.get();
    nodes.get(0).mode = FakeNode.Mode.DOWN;
    nodes.get(1).mode = FakeNode.Mode.DOWN;
    // A renewal that failed, and two tries after it: then the nodes answer again.
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> nodes.get(0).calls.get() - before >= 3);
    nodes.get(0).mode = FakeNode.Mode.UP;
    nodes.get(1).mode = FakeNode.Mode.UP;
    org.awaitility.Awaitility.await()
        .during(TTL.multipliedBy(2))
        .atMost(Duration.ofSeconds(10))
        .until(() -> lease.isValid() && losses.get() == 0);
    lease.release();
  }

  /**
   * A majority silent for longer than the validity: the renewal is tried again and again, and the
   * lease is lost once, by the end of its validity, with the nodes' account. Planted (tries that go
   * on past the validity): never lost, or lost late as expired.
   */
  @Test
  void aMajoritySilentPastTheValidityLosesTheLeaseOnceWithinTheTtl() {
    Redlock lock = quickRetries();
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow().keepAlive();
    AtomicInteger losses = new AtomicInteger();
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    lease.onLost(
        e -> {
          losses.incrementAndGet();
          lost.complete(e);
        });
    int before = nodes.get(0).calls.get();
    nodes.get(0).mode = FakeNode.Mode.DOWN;
    nodes.get(1).mode = FakeNode.Mode.DOWN;
    long silentAt = System.nanoTime();
    LeaseLostException loss = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> lost.get());
    long after = System.nanoTime() - silentAt;
    assertEquals(LeaseLostException.Reason.RENEWAL_FAILED, loss.reason(), loss.getMessage());
    assertTrue(after < TTL.plusMillis(300).toNanos(), "lost " + after / 1_000_000 + " ms after");
    assertTrue(nodes.get(0).calls.get() - before >= 3, "tried again and again");
    assertFalse(lease.isValid());
    org.awaitility.Awaitility.await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(5))
        .until(() -> losses.get() == 1);
  }

  /**
   * A machine paused for longer than the ttl (suspended, its VM paused: the monotonic clock stood
   * still, the wall clock went on): the lease is invalid as soon as the holder runs again, and its
   * renewal finds it so at its next tick and signals the loss. Planted (the monotonic clock alone):
   * valid for as long as the pause lasted.
   */
  @Test
  void aPauseLongerThanTheTtlEndsTheLeaseAtOnce() throws Exception {
    java.util.concurrent.atomic.AtomicLong paused = new java.util.concurrent.atomic.AtomicLong();
    Ticker clock =
        new Ticker.SuspendAware(
            System::nanoTime,
            () -> Ticker.SuspendAware.wallNanos() + paused.get(),
            Ticker.SuspendAware.wallGrainNanos());
    Redlock lock =
        cluster.start(3, RedlockConfig.builder().nodeTimeout(Duration.ofMillis(100)), clock);
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow().keepAlive();
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    lease.onLost(lost::complete);
    assertTrue(lease.isValid());
    paused.addAndGet(TTL.multipliedBy(10).toNanos()); // the machine was paused for 10 ttls
    assertFalse(lease.isValid(), "invalid at once");
    assertEquals(Duration.ZERO, lease.remainingValidity());
    LeaseLostException loss =
        assertTimeoutPreemptively(Duration.ofSeconds(5), () -> lost.get(), "renewal noticed");
    assertEquals(LeaseLostException.Reason.EXPIRED, loss.reason(), loss.getMessage());
  }

  /**
   * maxHold ends a kept-alive lease on time while a renewal is in flight: it has a timer of its
   * own. Planted (maxHold looked at only when a renewal falls due): lost once the silent round is
   * decided, 2,667 ms after the grant or later.
   */
  @Test
  void maxHoldEndsTheLeaseOnTimeWhileARenewalIsInFlight() {
    Redlock lock =
        redlock(
            RedlockConfig.builder()
                .nodeTimeout(Duration.ofMillis(1000))
                .maxHold(Duration.ofMillis(1800)));
    long beforeGrant = System.nanoTime();
    // Renewed every 1,667 ms; a round nobody answers is decided 1,000 ms after it is sent.
    Lease lease = lock.tryAcquire("r", Duration.ofSeconds(5)).orElseThrow().keepAlive();
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    lease.onLost(lost::complete);
    nodes.forEach(node -> node.mode = FakeNode.Mode.SILENT);
    LeaseLostException loss = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> lost.get());
    long heldMillis = (System.nanoTime() - beforeGrant) / 1_000_000;
    assertEquals(LeaseLostException.Reason.MAX_HOLD_REACHED, loss.reason(), loss.getMessage());
    assertTrue(heldMillis >= 1800, "not before maxHold: " + heldMillis + " ms");
    assertTrue(heldMillis < 2500, "while the renewal was in flight: " + heldMillis + " ms");
    assertFalse(lease.isValid());
  }

  /**
   * A loss callback registered before {@code keepAlive()} must not leave maxHold to the next
   * renewal: lost at maxHold (500 ms), not when the renewal falls due (2 s), as it was when the
   * deadline watch armed by {@code onLost} looked only at the validity.
   */
  @Test
  void maxHoldIsOnTimeWhenTheLossCallbackCameFirst() {
    Redlock lock = redlock(RedlockConfig.builder().maxHold(Duration.ofMillis(500)));
    long beforeGrant = System.nanoTime();
    Lease lease = lock.tryAcquire("r", Duration.ofSeconds(6)).orElseThrow();
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    lease.onLost(lost::complete);
    lease.keepAlive();
    LeaseLostException loss = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> lost.get());
    long heldMillis = (System.nanoTime() - beforeGrant) / 1_000_000;
    assertEquals(LeaseLostException.Reason.MAX_HOLD_REACHED, loss.reason(), loss.getMessage());
    assertTrue(heldMillis >= 500, "not before maxHold: " + heldMillis + " ms");
    assertTrue(heldMillis < 1500, "before the first renewal: " + heldMillis + " ms");
  }

  @Test
  void aHealthyLeaseIsRenewedPastItsTtl() {
    Redlock lock = redlock();
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow().keepAlive();
    int before = nodes.get(0).calls.get();
    // Three ttls later it is still valid, and each node was asked to extend several times.
    long end = System.nanoTime() + TTL.multipliedBy(3).toNanos();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> System.nanoTime() > end || !lease.isValid());
    assertTrue(lease.isValid());
    assertTrue(
        nodes.get(0).calls.get() - before >= 5, "renewed: " + (nodes.get(0).calls.get() - before));
    lease.release();
  }

  @Test
  void aLostLeaseIsNeverRenewedOrExtendedAndLateCallbacksRunAtOnce() {
    Redlock lock = redlock();
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow().keepAlive();
    nodes.forEach(n -> n.keys.clear()); // every node forgot us: the next renewal is refused
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    lease.onLost(lost::complete);
    LeaseLostException loss = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> lost.get());
    assertEquals(LeaseLostException.Reason.RENEWAL_FAILED, loss.reason());
    // Decided as soon as two refusals made a quorum impossible; the third may still be pending.
    assertTrue(
        loss.nodeOutcomes().stream().filter(o -> o.status() == NodeOutcome.Status.REFUSED).count()
            >= 2,
        loss.getMessage());
    assertSame(loss, assertThrows(LeaseLostException.class, lease::checkValid));
    assertFalse(lease.extend(TTL));
    assertThrows(LeaseLostException.class, lease::keepAlive);
    AtomicInteger late = new AtomicInteger();
    lease.onLost(e -> late.incrementAndGet());
    assertEquals(1, late.get(), "a callback registered after the loss runs at once");
  }

  @Test
  void aThrowingCallbackDoesNotStopTheOthers() {
    Redlock lock = redlock();
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow();
    AtomicInteger ran = new AtomicInteger();
    lease.onLost(
        e -> {
          throw new IllegalStateException("a careless listener");
        });
    lease.onLost(e -> ran.incrementAndGet());
    // No keepAlive: the lease simply expires, and the armed deadline reports it.
    org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> ran.get() == 1);
  }

  @Test
  void releaseCancelsRenewalAndNeverSignalsALoss() {
    Redlock lock = redlock();
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow().keepAlive();
    AtomicInteger losses = new AtomicInteger();
    lease.onLost(e -> losses.incrementAndGet());
    lease.release();
    // Release returns at quorum: let node 0 see its release before taking the baseline.
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> nodes.get(0).releases.get() == 1);
    int calls = nodes.get(0).calls.get();
    org.awaitility.Awaitility.await()
        .during(TTL)
        .atMost(Duration.ofSeconds(5))
        .until(() -> nodes.get(0).calls.get() == calls);
    assertEquals(0, losses.get());
  }

  @Test
  void renewalRulesNameTheirParameters() {
    assertEquals(
        "renewalFraction must be > 0 and <= 0.5, was 0.0",
        assertThrows(
                IllegalArgumentException.class, () -> RedlockConfig.builder().renewalFraction(0))
            .getMessage());
    assertThrows(
        IllegalArgumentException.class, () -> RedlockConfig.builder().renewalFraction(0.51));
    assertThrows(
        IllegalArgumentException.class, () -> RedlockConfig.builder().renewalFraction(Double.NaN));
    assertEquals(
        "maxHold must be > 0, was PT0S",
        assertThrows(
                IllegalArgumentException.class,
                () -> RedlockConfig.builder().maxHold(Duration.ZERO))
            .getMessage());
    assertThrows(NullPointerException.class, () -> RedlockConfig.builder().taskInterruption(null));
    Redlock lock = redlock();
    IllegalArgumentException tooShort =
        assertThrows(
            IllegalArgumentException.class,
            () -> lock.withLock("r", Duration.ofMillis(250), Duration.ZERO, lease -> "never runs"));
    assertTrue(
        tooShort
            .getMessage()
            .startsWith(
                "ttl too short to renew: ttl × renewalFraction must be >= nodeTimeout (100 ms)"),
        tooShort.getMessage());
    assertTrue(nodes.stream().allMatch(n -> n.calls.get() == 0), "nothing was sent");
  }

  @Test
  void renewalSettingsReadFromProperties() {
    Properties p = new Properties();
    p.setProperty("redlock.nodes", "redis://h:1");
    p.setProperty("redlock.renewalFraction", "0.25");
    p.setProperty("redlock.maxHold", "2h");
    p.setProperty("redlock.taskInterruption", "never");
    RedlockConfig config = RedlockConfig.fromProperties(p);
    assertEquals(0.25, config.renewalFraction());
    assertEquals(Duration.ofHours(2), config.maxHold());
    assertEquals(TaskInterruption.NEVER, config.taskInterruption());
    p.setProperty("redlock.taskInterruption", "sometimes");
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> RedlockConfig.fromProperties(p))
            .getMessage()
            .startsWith("redlock.taskInterruption must be one of [ON_LEASE_LOSS, NEVER]"));
  }

  @Test
  void withLockNeverInterruptsWhenToldNotTo() throws Exception {
    Redlock lock =
        redlock(
            RedlockConfig.builder()
                .nodeTimeout(Duration.ofMillis(100))
                .taskInterruption(TaskInterruption.NEVER));
    String result =
        lock.withLock(
            "r",
            TTL,
            Duration.ZERO,
            lease -> {
              nodes.forEach(n -> n.keys.clear());
              org.awaitility.Awaitility.await()
                  .atMost(Duration.ofSeconds(5))
                  .until(() -> !lease.isValid());
              assertFalse(Thread.currentThread().isInterrupted(), "not interrupted");
              return "done, and the job saw the loss itself";
            });
    assertEquals("done, and the job saw the loss itself", result);
  }
}
