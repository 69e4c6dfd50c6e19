package dev.redlock.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.LockEvent;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * {@link LeaseContract}'s cases: one holder at a time, expiry and ownership, extends, and
 * withLock's renewal and loss.
 */
abstract class MutexCases extends ContractBase {
  // ---- one holder at a time ----------------------------------------------------------------

  @Test
  void oneHolderAtATimeAndTheNextAfterRelease() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("exclusive");
    Lease held = a.acquire(r, LONG_TTL, NO_HANG);
    assertTrue(held.isValid());
    assertTrue(b.tryAcquire(r, LONG_TTL).isEmpty(), "a second client cannot acquire while held");
    assertTrue(a.tryAcquire(r, LONG_TTL).isEmpty(), "not reentrant: the same client cannot either");
    held.release();
    Lease next =
        b.tryAcquire(r, LONG_TTL)
            .orElseThrow(() -> new AssertionError("free again as soon as release returns"));
    assertTrue(next.fencingToken() > held.fencingToken(), "fencing tokens grow");
    next.release();
  }

  @Test
  void aLeaseNamesItsResourceAndKeepsMostOfItsTtl() throws Exception {
    Redlock a = client();
    String r = resource("happy");
    Lease lease = a.acquire(r, LONG_TTL, NO_HANG);
    assertEquals(r, lease.resource());
    assertTrue(lease.isValid());
    assertTrue(
        lease.remainingValidity().compareTo(LONG_TTL) < 0,
        "validity is ttl minus elapsed and drift: " + lease.remainingValidity());
    assertTrue(
        lease.remainingValidity().compareTo(LONG_TTL.minus(TIMING.scaled(Duration.ofSeconds(1))))
            > 0,
        "a healthy store leaves most of the ttl: " + lease.remainingValidity());
    lease.release();
    assertFalse(lease.isValid());
  }

  @Test
  void acquireGivesUpAfterMaxWaitWhenHeldElsewhere() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("busy");
    try (Lease held = a.acquire(r, LONG_TTL, Duration.ZERO)) {
      LockUnavailableException e =
          assertTimeoutPreemptively(
              NO_HANG,
              () ->
                  assertThrows(
                      LockUnavailableException.class,
                      () -> b.acquire(r, LONG_TTL, TIMING.scaled(Duration.ofMillis(300)))));
      assertEquals(LockUnavailableException.Reason.HELD_ELSEWHERE, e.reason());
      assertEquals(r, e.resource());
      assertTrue(e.attempts() > 1, "it retried: " + e.attempts());
      assertEquals(nodeNames().size(), e.nodeOutcomes().size(), e.getMessage());
      assertTrue(
          e.getMessage().contains("held elsewhere") && e.getMessage().contains(nodeNames().get(0)),
          e.getMessage());
      assertTrue(held.isValid());
    }
  }

  @Test
  void twoRacingForOneResourceExactlyOneWins() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("race");
    // Warm both up first: the race is about the store's decision, not about connecting.
    a.acquire(resource("warm-a"), LONG_TTL, NO_HANG).release();
    b.acquire(resource("warm-b"), LONG_TTL, NO_HANG).release();
    CyclicBarrier start = new CyclicBarrier(2);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<Optional<Lease>>> tries = new ArrayList<>();
      for (Redlock s : List.of(a, b)) {
        tries.add(
            pool.submit(
                () -> {
                  start.await();
                  try {
                    return s.tryAcquire(r, LONG_TTL);
                  } catch (LockUnavailableException e) {
                    return Optional.<Lease>empty();
                  }
                }));
      }
      // Both answers first: releasing the winner before the other has answered would let it win.
      List<Lease> winners = new ArrayList<>();
      for (Future<Optional<Lease>> t : tries) {
        t.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS).ifPresent(winners::add);
      }
      int won = winners.size();
      winners.forEach(Lease::release);
      assertEquals(1, won, "exactly one of two racing clients wins");
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * 3 clients × 4 threads × 15 rounds on one resource: no two holders ever inside at once, every
   * lease valid inside, the fencing tokens growing in grant order, and nothing left kept after.
   */
  @Test
  void manyClientsAndThreadsNeverOverlap() throws Exception {
    int clientsCount = 3;
    int threadsPerClient = 4;
    int rounds = 15;
    OverlapDetector detector = new OverlapDetector();
    AtomicInteger grants = new AtomicInteger();
    List<Long> tokens = new ArrayList<>();
    String r = resource("contended");
    Duration maxWait = TIMING.scaled(Duration.ofSeconds(60));
    onThreadsOfClients(
        clientsCount,
        threadsPerClient,
        client -> client,
        (s, who, index) -> {
          for (int i = 0; i < rounds; i++) {
            try (Lease lease = s.acquire(r, LONG_TTL, maxWait)) {
              detector.enter(r, who);
              synchronized (tokens) {
                tokens.add(lease.fencingToken());
              }
              grants.incrementAndGet();
              assertTrue(lease.isValid());
              detector.exit(r, who);
            }
          }
        });
    assertEquals(List.of(), detector.violations());
    assertEquals(clientsCount * threadsPerClient * rounds, grants.get());
    for (int i = 1; i < tokens.size(); i++) {
      assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens in grant order: " + tokens);
    }
    assertFalse(refused(client(), r), "every lease was released");
    awaitNothingKept(r);
  }

  @Test
  void resourcesAreCaseSensitive() throws Exception {
    Redlock a = client();
    Lease upper = a.acquire(resource("Case"), LONG_TTL, NO_HANG);
    Lease lower =
        a.tryAcquire(resource("case"), LONG_TTL)
            .orElseThrow(() -> new AssertionError("'case' is not 'Case'"));
    assertTrue(upper.isValid() && lower.isValid(), "two resources, two leases");
    upper.release();
    lower.release();
  }

  // ---- expiry and ownership ----------------------------------------------------------------

  @Test
  void aHolderThatHangsLosesTheLockWhenItsTtlEnds() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("hang");
    Lease stalled = a.acquire(r, shortTtl(), NO_HANG);
    // A stops renewing and acting: after its ttl, B gets the lock.
    Lease next = assertTimeoutPreemptively(NO_HANG, () -> b.acquire(r, LONG_TTL, NO_HANG));
    assertFalse(stalled.isValid(), "B was granted only once A's lease had ended");
    assertTrue(next.fencingToken() > stalled.fencingToken());
    next.release();
  }

  @Test
  void anExpiredHolderCanNeitherReleaseNorExtendTheNextOwnersLock() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Redlock c = client();
    String r = resource("stale");
    Lease stale = a.acquire(r, shortTtl(), NO_HANG);
    waitOut(stale);
    Lease owner = b.acquire(r, LONG_TTL, NO_HANG);
    assertFalse(stale.extend(LONG_TTL), "an expired lease is never extended");
    stale.release(); // owner-checked: B's lock stays
    assertTrue(c.tryAcquire(r, LONG_TTL).isEmpty(), "B still holds it");
    assertTrue(owner.isValid());
    assertTrue(owner.extend(LONG_TTL), "the owner extends");
    owner.release();
  }

  /**
   * {@code extend} moves the validity forward, here and in the store (another client is still
   * refused once the first ttl has passed); a released lease cannot be extended.
   */
  @Test
  void extendMovesValidityForwardInTheStore() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("extended");
    Lease lease = a.tryAcquire(r, shortTtl()).orElseThrow();
    Duration longer = atMostMaxTtl(TIMING.scaled(Duration.ofSeconds(30)));
    assertTrue(lease.extend(longer));
    assertTrue(
        lease.remainingValidity().compareTo(longer.multipliedBy(2).dividedBy(3)) > 0,
        "validity was moved forward: " + lease.remainingValidity());
    assertThroughout(
        shortTtl().plus(TIMING.scaled(Duration.ofMillis(500))),
        "the store kept the extended lease past its first ttl",
        () -> refused(b, r));
    lease.release();
    assertThrows(
        IllegalStateException.class,
        () -> lease.extend(LONG_TTL),
        "a released lease cannot be extended");
  }

  /**
   * {@code extend(ttl)} with less than the lease has left shortens neither the lease nor the
   * store's copy: another client still cannot take the lock once that shorter ttl has passed.
   */
  @Test
  void anExtendShorterThanWhatIsLeftShortensNothing() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("shorter");
    Duration longTtl = shortTtl().multipliedBy(3);
    Lease lease = a.acquire(r, longTtl, NO_HANG);
    assertTrue(lease.extend(shortTtl()), "a quorum still holds the lease");
    assertTrue(
        lease.remainingValidity().compareTo(shortTtl().multipliedBy(2)) > 0,
        "the lease kept its longer validity: " + lease.remainingValidity());
    // Past the shorter ttl (and a margin for clocks), the store must still hold it.
    assertThroughout(
        shortTtl().plus(TIMING.scaled(Duration.ofMillis(500))),
        "the store shortened the lease: another client took it",
        () -> refused(b, r));
    assertTrue(lease.isValid());
    lease.release();
  }

  /**
   * A kept-alive lease given a short extend keeps its validity and its renewal schedule: before,
   * the extend's shorter validity replaced the renewal's, and the lease was lost before its next
   * renewal fell due. The lease's ttl is 6 short ttls (a renewal every 2), the extend 1: the window
   * outlasts the shorter validity and a renewal.
   */
  @Test
  void aKeptAliveLeaseSurvivesAShorterExtend() {
    Redlock a = client();
    Redlock b = client();
    String r = resource("kept-shorter");
    Lease lease = a.tryAcquire(r, shortTtl().multipliedBy(6)).orElseThrow().keepAlive();
    assertTrue(lease.extend(shortTtl()));
    assertThroughout(
        shortTtl().multipliedBy(5).dividedBy(2),
        "the kept-alive lease stays valid, and held in the store",
        () -> lease.isValid() && refused(b, r));
    lease.release();
  }

  /**
   * A kept-alive lease given an extend longer than its ttl renews at its own pace: before, renewals
   * were counted from the extend's start, fell due at once and ran in a tight loop.
   */
  @Test
  void aKeptAliveLeaseGivenALongerExtendRenewsAtItsPace() {
    AtomicInteger renewals = new AtomicInteger();
    Redlock a =
        client(
            settings ->
                settings.listener(
                    event -> {
                      if (event.kind() == LockEvent.Kind.EXTENDED) {
                        renewals.incrementAndGet();
                      }
                    }));
    Lease lease = a.tryAcquire(resource("kept-longer"), shortTtl()).orElseThrow().keepAlive();
    assertTrue(lease.extend(shortTtl().multipliedBy(5)));
    int before = renewals.get();
    Duration window = shortTtl().multipliedBy(2);
    assertThroughout(window, "the kept-alive lease stays valid", lease::isValid);
    int during = renewals.get() - before;
    lease.release();
    // One renewal every ttl × renewalFraction (a third): about 6 in 2 ttls. The loop made
    // thousands.
    assertTrue(during <= 20, during + " renewals in " + window);
  }

  // ---- withLock, renewal and loss ----------------------------------------------------------

  @Test
  void withLockRenewsWhileTheTaskRunsAndReleasesAfter() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("renewed");
    Duration ttl = shortTtl();
    String result =
        a.withLock(
            r,
            ttl,
            NO_HANG,
            lease -> {
              long until = System.nanoTime() + ttl.multipliedBy(3).toNanos();
              while (System.nanoTime() < until) {
                assertTrue(b.tryAcquire(r, LONG_TTL).isEmpty(), "still held");
                lease.checkValid();
                LockSupport.parkNanos(ttl.toNanos() / 4); // the task's own work
              }
              return "done";
            });
    assertEquals("done", result);
    Lease after =
        b.tryAcquire(r, LONG_TTL)
            .orElseThrow(() -> new AssertionError("withLock released when the task returned"));
    after.release();
  }

  @Test
  void aStoreCutOffMidTaskLosesTheLeaseAndTellsTheTask() throws Exception {
    Redlock a = client();
    String r = resource("lost");
    CompletableFuture<LeaseLostException> signalled = new CompletableFuture<>();
    Exception thrown =
        assertThrows(
            Exception.class,
            () ->
                a.withLock(
                    r,
                    shortTtl(),
                    NO_HANG,
                    lease -> {
                      lease.onLost(signalled::complete);
                      disconnect();
                      while (true) { // the job: it checks before each step
                        lease.checkValid();
                        // One step of work; the lease-loss interrupt cuts it short (parkNanos
                        // returns at once, the flag stays set), and the next check throws.
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                      }
                    }));
    assertTrue(thrown instanceof LeaseLostException, thrown.toString());
    // The task threw: the interrupt the loss delivered was cleared with it (whether the task saw
    // the loss through the interrupt or through checkValid), so the caller's next blocking call
    // (here the wait for the callback, which may run after the task ended) is not broken.
    assertFalse(Thread.currentThread().isInterrupted(), "withLock left the loss's interrupt set");
    LeaseLostException loss = signalled.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(
        loss.reason() == LeaseLostException.Reason.RENEWAL_FAILED
            || loss.reason() == LeaseLostException.Reason.EXPIRED,
        loss.toString());
    reconnect();
  }

  /**
   * While the store is cut off, an attempt fails in bounded time as unreachable (not as busy), with
   * the per-node account, and so does {@code acquire} once {@code maxWait} is spent; once it is
   * back, the same client is granted the lock.
   */
  @Test
  void whileTheStoreIsCutOffAttemptsFailInTimeAndSaySo() throws Exception {
    Redlock a = client();
    String r = resource("cut-off");
    a.acquire(resource("warm"), LONG_TTL, NO_HANG).release(); // connected before the cut
    disconnect();
    LockUnavailableException once =
        assertTimeoutPreemptively(
            NO_HANG,
            () -> assertThrows(LockUnavailableException.class, () -> a.tryAcquire(r, LONG_TTL)));
    assertEquals(
        LockUnavailableException.Reason.QUORUM_UNREACHABLE, once.reason(), once.toString());
    assertEquals(
        nodeNames(), once.nodeOutcomes().stream().map(NodeOutcome::node).toList(), once.toString());
    LockUnavailableException waited =
        assertTimeoutPreemptively(
            NO_HANG,
            () ->
                assertThrows(
                    LockUnavailableException.class,
                    () -> a.acquire(r, LONG_TTL, TIMING.scaled(Duration.ofMillis(500)))));
    assertEquals(
        LockUnavailableException.Reason.QUORUM_UNREACHABLE, waited.reason(), waited.toString());
    reconnect();
    a.acquire(r, LONG_TTL, NO_HANG).release();
  }
}
