package dev.redlock.testkit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.LockEvent;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.RedlockListener;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** {@link LeaseContract}'s cases: release and close, listeners, and bad input. */
abstract class CloseCases extends MutexCases {
  // ---- release and close -------------------------------------------------------------------

  /**
   * A holder whose thread was interrupted ({@code Future.cancel(true)}, {@code shutdownNow()}, a
   * lease-loss interrupt) still releases, and keeps its interrupt: the next client gets the lock
   * long before the ttl.
   */
  @Test
  void anInterruptedHolderStillReleases() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("interrupted");
    Lease lease = a.acquire(r, LONG_TTL, NO_HANG);
    Thread.currentThread().interrupt();
    try {
      lease.release();
      assertTrue(Thread.currentThread().isInterrupted(), "release kept the interrupt");
    } finally {
      Thread.interrupted();
    }
    Lease next =
        assertTimeoutPreemptively(
            NO_HANG, () -> b.acquire(r, shortTtl(), TIMING.scaled(Duration.ofSeconds(10))));
    next.release();
  }

  @Test
  void releaseIsIdempotent() {
    Redlock a = client();
    String r = resource("released");
    Lease lease = a.tryAcquire(r, LONG_TTL).orElseThrow();
    lease.release();
    lease.release();
    lease.close();
    assertFalse(lease.isValid());
    assertEquals(Duration.ZERO, lease.remainingValidity());
    awaitNothingKept(r);
    client().tryAcquire(r, LONG_TTL).orElseThrow(() -> new AssertionError("released")).release();
  }

  /**
   * {@code close()} releases what is still held (another client gets it at once), is idempotent,
   * and refuses every later call.
   */
  @Test
  void closeReleasesWhatIsHeldAndRefusesLaterCalls() throws Exception {
    Redlock a = client();
    String r = resource("closed");
    acquireAndReleaseOnFourThreads(a, r, LONG_TTL);
    Lease stillHeld = a.tryAcquire(r, LONG_TTL).orElseThrow();
    a.close();
    a.close(); // idempotent
    assertFalse(stillHeld.isValid(), "close releases what is still held");
    awaitNothingKept(r);
    client()
        .tryAcquire(r, LONG_TTL)
        .orElseThrow(() -> new AssertionError("close released the lease in the store"))
        .release();
    assertThrows(IllegalStateException.class, () -> a.tryAcquire(r, LONG_TTL));
    assertThrows(IllegalStateException.class, () -> a.acquire(r, LONG_TTL, Duration.ZERO));
    assertThrows(
        IllegalStateException.class, () -> a.withLock(r, LONG_TTL, Duration.ZERO, lease -> 1));
  }

  /**
   * {@code close()} never frees the lease of a task still running inside {@code withLock}, even
   * called on an interrupted thread (whose flag it keeps): another client is refused until the task
   * returns, and close returns after it.
   */
  @Test
  void closeWaitsForATaskRunningInsideWithLock() throws Exception {
    Redlock a = client();
    String r = resource("close-task");
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    CompletableFuture<Boolean> validToTheEnd = new CompletableFuture<>();
    Thread job =
        new Thread(
            () -> {
              try {
                validToTheEnd.complete(
                    a.withLock(
                        r,
                        LONG_TTL,
                        NO_HANG,
                        lease -> {
                          started.countDown();
                          finish.await(); // interrupted only by a loss, which fails the test
                          return lease.isValid();
                        }));
              } catch (Exception e) {
                validToTheEnd.completeExceptionally(e);
              }
            },
            "job");
    job.start();
    assertTrue(started.await(NO_HANG.toMillis(), TimeUnit.MILLISECONDS));
    CompletableFuture<Boolean> flagKept = new CompletableFuture<>();
    Thread closing =
        new Thread(
            () -> {
              Thread.currentThread().interrupt(); // as a pool's shutdownNow() leaves it
              a.close();
              flagKept.complete(Thread.currentThread().isInterrupted());
            },
            "closing");
    closing.start();
    await().atMost(NO_HANG).until(() -> a.toString().contains("closed"));
    Redlock b = client();
    long until = System.nanoTime() + TIMING.scaled(Duration.ofSeconds(1)).toNanos();
    while (System.nanoTime() - until < 0) {
      Optional<Lease> taken = b.tryAcquire(r, LONG_TTL);
      taken.ifPresent(Lease::release);
      assertFalse(taken.isPresent(), "another client won the lock of a running task");
      assertTrue(closing.isAlive(), "close() returned while the task ran");
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
    finish.countDown();
    assertTrue(validToTheEnd.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS), "valid to the end");
    closing.join(NO_HANG.toMillis());
    assertFalse(closing.isAlive(), "close() returned once the task had");
    assertTrue(flagKept.getNow(false), "close() kept the caller's interrupt");
    awaitNothingKept(r);
    b.tryAcquire(r, LONG_TTL).orElseThrow(() -> new AssertionError("released after")).release();
  }

  /**
   * {@code close()} stops renewing a kept-alive lease and leaves it to its holder: it is lost (and
   * {@code onLost} told) when its validity runs out, and no other client wins it before then.
   */
  @Test
  void closeLeavesAKeptAliveLeaseToItsHolderUntilItsValidityRunsOut() throws Exception {
    Redlock a = client();
    String r = resource("close-kept");
    Lease lease = a.tryAcquire(r, shortTtl()).orElseThrow().keepAlive();
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    lease.onLost(lost::complete);
    Thread closing = new Thread(a::close, "closing");
    closing.start();
    Redlock b = client();
    long deadline = System.nanoTime() + NO_HANG.toNanos();
    while (closing.isAlive()) {
      assertTrue(System.nanoTime() - deadline < 0, "close() hangs");
      Optional<Lease> taken = b.tryAcquire(r, shortTtl());
      boolean stillValid = lease.isValid();
      taken.ifPresent(Lease::release);
      assertFalse(taken.isPresent() && stillValid, "another client won a lease still valid");
      closing.join(20);
    }
    assertTrue(lost.isDone(), "told of the loss before close() returned; else released");
    assertEquals(LeaseLostException.Reason.EXPIRED, lost.get().reason());
    assertThrows(IllegalStateException.class, lease::keepAlive);
    await("free once its keys ran out (the drift margin after its validity)")
        .atMost(NO_HANG)
        .until(
            () ->
                b.tryAcquire(r, shortTtl())
                    .map(
                        free -> {
                          free.release();
                          return true;
                        })
                    .orElse(false));
  }

  // ---- listeners and input -----------------------------------------------------------------

  @Test
  void listenersSeeEachLeaseFromGrantToRelease() {
    List<LockEvent> events = new CopyOnWriteArrayList<>();
    Redlock a =
        client(settings -> settings.listener(events::add).listener(RedlockListener.auditLog()));
    Lease lease = a.tryAcquire(resource("listened"), LONG_TTL).orElseThrow();
    lease.release();
    assertEquals(
        List.of(LockEvent.Kind.ATTEMPT, LockEvent.Kind.ACQUIRED, LockEvent.Kind.RELEASED),
        events.stream().map(LockEvent::kind).toList());
    assertEquals(lease.fencingToken(), events.get(1).fencingToken());
    assertEquals(
        nodeNames(), events.get(1).nodeOutcomes().stream().map(NodeOutcome::node).toList());
  }

  @Test
  void badInputIsRefusedEarlyWithTheRule() {
    Redlock a = client();
    IllegalArgumentException blank =
        assertThrows(IllegalArgumentException.class, () -> a.tryAcquire(" ", shortTtl()));
    assertTrue(blank.getMessage().startsWith("resource must not be blank"), blank.getMessage());
    IllegalArgumentException zero =
        assertThrows(IllegalArgumentException.class, () -> a.tryAcquire("r", Duration.ZERO));
    assertTrue(zero.getMessage().startsWith("ttl must be > 0"), zero.getMessage());
    IllegalArgumentException tooLong =
        assertThrows(IllegalArgumentException.class, () -> a.tryAcquire("r", Duration.ofDays(2)));
    assertTrue(tooLong.getMessage().startsWith("ttl must be <= maxTtl"), tooLong.getMessage());
    assertThrows(NullPointerException.class, () -> a.tryAcquire(null, shortTtl()));
  }
}
