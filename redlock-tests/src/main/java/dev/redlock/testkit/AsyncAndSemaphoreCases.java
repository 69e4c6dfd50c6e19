package dev.redlock.testkit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockEvent;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * {@link LeaseContract}'s cases: the asynchronous API, and semaphores (K permits, each a mutex).
 */
abstract class AsyncAndSemaphoreCases extends SetCases {
  // ---- the asynchronous API: the same leases, on every store ------------------------------

  @Test
  void theAsyncApiGrantsRefusesWaitsAndReleasesLikeTheBlockingOne() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("async");
    Lease held =
        a.tryAcquireAsync(r, LONG_TTL).get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
    assertEquals(
        Optional.empty(),
        b.tryAcquireAsync(r, LONG_TTL).get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS));
    CompletableFuture<Lease> waiting = b.acquireAsync(r, LONG_TTL, NO_HANG);
    assertFalse(waiting.isDone(), "granted while held");
    held.release();
    Lease next = waiting.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(next.fencingToken() > held.fencingToken(), "fencing tokens grow");
    next.release();
    String done =
        a.withLockAsync(r, LONG_TTL, NO_HANG, lease -> CompletableFuture.completedFuture("done"))
            .get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    assertEquals("done", done);
    awaitNothingKept(r);
    b.tryAcquire(r, LONG_TTL)
        .orElseThrow(() -> new AssertionError("withLockAsync released it: free at once"))
        .release();
  }

  /** Cancelled while it waits: the lock freed later is not taken by it. */
  @Test
  void aCancelledAsyncWaitTakesNothingLater() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    Redlock a = client();
    Redlock b =
        client(
            settings ->
                settings
                    .retryDelay(TIMING.scaled(Duration.ofMillis(20)))
                    .retryJitter(Duration.ZERO)
                    .listener(
                        e -> {
                          if (e.kind() == LockEvent.Kind.ATTEMPT) {
                            attempts.incrementAndGet();
                          }
                        }));
    String r = resource("asyncCancel");
    Lease held = a.acquire(r, LONG_TTL, NO_HANG);
    CompletableFuture<Lease> waiting = b.acquireAsync(r, LONG_TTL, NO_HANG);
    await("it retries").atMost(NO_HANG).until(() -> attempts.get() >= 2);
    assertTrue(waiting.cancel(true));
    int attemptsAtCancel = attempts.get();
    held.release();
    Lease again =
        a.tryAcquire(r, LONG_TTL)
            .orElseThrow(() -> new AssertionError("taken by the cancelled wait"));
    assertTrue(
        attempts.get() <= attemptsAtCancel + 1, "at most the attempt in flight at the cancel");
    again.release();
  }

  // ---- semaphores: K permits, each a mutex -------------------------------

  /** Takes {@code count} permits of {@code semaphore} at once (tryAcquire, each must be won). */
  static List<Lease> takePermits(Semaphore semaphore, int count) {
    List<Lease> permits = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      permits.add(
          semaphore
              .tryAcquire(LONG_TTL)
              .orElseThrow(() -> new AssertionError("a free permit of " + semaphore)));
    }
    return permits;
  }

  /** The permit resources {@code permits} hold, sorted. */
  static List<String> permitResources(List<Lease> permits) {
    return permits.stream().map(Lease::resource).sorted().toList();
  }

  /**
   * A semaphore of 3 over two clients: three permits, each a different permit resource, a fourth
   * refused to both (tryAcquire empty; acquire gives up as contention, naming the semaphore); a
   * released permit is granted again at once, on the same permit resource with a larger token.
   */
  @Test
  void aSemaphoreGrantsAtMostItsPermitsAndTheNextOnRelease() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String name = resource("sem-k");
    Semaphore ofA = a.semaphore(name, 3);
    Semaphore ofB = b.semaphore(name, 3);
    List<Lease> held = new ArrayList<>(takePermits(ofA, 2));
    held.addAll(takePermits(ofB, 1));
    assertEquals(
        List.of(ofA.permitResource(0), ofA.permitResource(1), ofA.permitResource(2)),
        permitResources(held),
        "three permits, three permit resources");
    assertEquals(name + "@permit:1", ofA.permitResource(1));
    assertEquals(Optional.empty(), ofA.tryAcquire(LONG_TTL), "a fourth permit");
    assertEquals(Optional.empty(), ofB.tryAcquire(LONG_TTL), "a fourth permit, other client");
    LockUnavailableException busy =
        assertThrows(
            LockUnavailableException.class,
            () -> ofB.acquire(LONG_TTL, TIMING.scaled(Duration.ofMillis(200))));
    assertEquals(LockUnavailableException.Reason.HELD_ELSEWHERE, busy.reason(), busy.toString());
    assertEquals(name, busy.resource());
    assertTrue(busy.getMessage().contains("all 3 permits held elsewhere"), busy.getMessage());
    Lease given = held.remove(1);
    given.release();
    Lease next =
        ofB.tryAcquire(LONG_TTL).orElseThrow(() -> new AssertionError("free once released"));
    assertEquals(given.resource(), next.resource(), "the one free permit");
    assertTrue(next.fencingToken() > given.fencingToken(), "its token grows");
    held.add(next);
    held.forEach(Lease::release);
    for (int i = 0; i < 3; i++) {
      awaitNothingKept(ofA.permitResource(i));
    }
    assertEquals(3, takePermits(ofA, 3).size(), "all three free again");
  }

  /**
   * A permit whose holder stops is given back by its ttl: a waiting client is granted it, and the
   * stale holder can neither release nor extend the new holder's permit (owner-checked).
   */
  @Test
  void aPermitComesBackWithItsTtlAndAStaleHolderCannotTouchTheNext() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Redlock c = client();
    String name = resource("sem-ttl");
    Semaphore ofA = a.semaphore(name, 2);
    Lease stalled = ofA.tryAcquire(shortTtl()).orElseThrow();
    Lease kept = ofA.tryAcquire(LONG_TTL).orElseThrow();
    Lease next =
        assertTimeoutPreemptively(NO_HANG, () -> b.semaphore(name, 2).acquire(LONG_TTL, NO_HANG));
    assertFalse(stalled.isValid(), "granted only once the stalled permit had run out");
    assertEquals(stalled.resource(), next.resource(), "the stalled holder's permit");
    assertTrue(next.fencingToken() > stalled.fencingToken());
    assertFalse(stalled.extend(LONG_TTL), "an expired permit is never extended");
    stalled.release(); // owner-checked: B's permit stays
    assertEquals(Optional.empty(), c.semaphore(name, 2).tryAcquire(LONG_TTL), "both still held");
    assertTrue(next.isValid() && kept.isValid());
    next.release();
    kept.release();
  }

  /** withPermit renews the permit while the task runs (past its ttl) and releases it after. */
  @Test
  void withPermitRenewsThePermitWhileTheTaskRunsAndReleasesAfter() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String name = resource("sem-renewed");
    Semaphore ofB = b.semaphore(name, 1);
    Duration ttl = shortTtl();
    String result =
        a.semaphore(name, 1)
            .withPermit(
                ttl,
                NO_HANG,
                permit -> {
                  // Past its ttl: only renewal keeps it held.
                  long until = System.nanoTime() + ttl.multipliedBy(5).dividedBy(4).toNanos();
                  while (System.nanoTime() < until) {
                    assertTrue(ofB.tryAcquire(LONG_TTL).isEmpty(), "still held");
                    permit.checkValid();
                    LockSupport.parkNanos(ttl.toNanos() / 4);
                  }
                  return "done";
                });
    assertEquals("done", result);
    ofB.tryAcquire(LONG_TTL)
        .orElseThrow(() -> new AssertionError("withPermit released the permit"))
        .release();
  }

  /**
   * The number of permits changes on a live semaphore. Growing from 3 to 5: a client on 5 takes the
   * two new permits beside the three held, a client on 3 still none. Shrinking from 5 to 3: the
   * permits at and above 3 are never granted to a client on 3, leases on them run until released,
   * and meanwhile the valid permits are at most 5 (the largest number they were taken through),
   * coming down to 3 once those are released.
   */
  @Test
  void growingAndShrinkingThePermitsOfALiveSemaphore() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String name = resource("sem-resize");
    Semaphore three = a.semaphore(name, 3);
    Semaphore five = b.semaphore(name, 5);
    List<Lease> low = takePermits(three, 3);
    assertEquals(Optional.empty(), three.tryAcquire(LONG_TTL), "3 of 3");
    List<Lease> high = takePermits(five, 2); // grown: the two new permits
    assertEquals(
        List.of(five.permitResource(3), five.permitResource(4)),
        permitResources(high),
        "the grown client takes the new permits");
    assertEquals(Optional.empty(), five.tryAcquire(LONG_TTL), "5 of 5");
    assertEquals(Optional.empty(), three.tryAcquire(LONG_TTL), "a client on 3 keeps below 3");
    // Shrunk to 3: the holders of permits 3 and 4 keep them until they release.
    low.forEach(Lease::release);
    Semaphore shrunk = client().semaphore(name, 3);
    List<Lease> again = takePermits(shrunk, 3);
    assertEquals(
        List.of(shrunk.permitResource(0), shrunk.permitResource(1), shrunk.permitResource(2)),
        permitResources(again));
    assertEquals(Optional.empty(), shrunk.tryAcquire(LONG_TTL), "never permit 3 or 4");
    assertTrue(high.stream().allMatch(Lease::isValid), "leases above 3 run until released");
    high.forEach(Lease::release);
    assertEquals(Optional.empty(), shrunk.tryAcquire(LONG_TTL), "3 of 3 once they are gone");
    again.forEach(Lease::release);
    for (int i = 0; i < 5; i++) {
      awaitNothingKept(five.permitResource(i));
    }
  }

  /**
   * 3 clients × 3 threads × 6 rounds on a semaphore of 2, each holding its permit a moment: never
   * more than 2 holders (counted in this JVM between grant and release, and by the history
   * checker), each permit's tokens growing, and the bound reached.
   */
  @Test
  void manyClientsShareASemaphoreAndNeverExceedItsPermits() throws Exception {
    int clientsCount = 3;
    int threadsPerClient = 3;
    int rounds = 6;
    String name = resource("sem-contended");
    History history = new History();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    Duration maxWait = TIMING.scaled(Duration.ofSeconds(60));
    onThreadsOfClients(
        clientsCount,
        threadsPerClient,
        client -> client.semaphore(name, 2),
        (semaphore, who, index) -> {
          for (int i = 0; i < rounds; i++) {
            try (Lease permit = semaphore.acquire(LONG_TTL, maxWait)) {
              history.permitGranted(who, name, 2, permit);
              most.accumulateAndGet(inside.incrementAndGet(), Math::max);
              assertTrue(permit.isValid());
              history.foundValid(who, permit);
              LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // the work
              inside.decrementAndGet();
              history.released(who, permit);
            }
          }
        });
    assertEquals(List.of(), HistoryChecker.violations(history));
    assertTrue(most.get() <= 2, "at most 2 holders at once, was " + most.get());
    assertEquals(2, HistoryChecker.mostPermitHoldersAtOnce(history, name), "the bound was used");
  }

  @Test
  void badSemaphoresAreRefusedEarlyWithTheRule() {
    Redlock a = client();
    assertRule(() -> a.semaphore(" ", 2), "name must not be blank");
    assertRule(() -> a.semaphore("jobs@permit:1", 2), "name must not contain '@permit:'");
    assertRule(() -> a.semaphore(resource("s"), 0), "permits must be between 1 and 64, was 0");
    assertRule(
        () -> a.semaphore(resource("s"), Semaphore.MAX_PERMITS + 1),
        "permits must be between 1 and 64, was 65");
    // A name every store refuses: too long for a table's key, and with the nodes' reserved mark.
    assertRule(
        () -> a.semaphore("@" + "x".repeat(300), 2), "name must make permit resources the store");
    NullPointerException nulls =
        assertThrows(NullPointerException.class, () -> a.semaphore(null, 2));
    assertEquals("name must not be null", nulls.getMessage());
    Semaphore semaphore = a.semaphore(resource("s"), 2);
    assertEquals(resource("s"), semaphore.name());
    assertEquals(2, semaphore.permits());
    assertRule(() -> semaphore.permitResource(2), "index must be between 0 and 1, was 2");
    assertRule(() -> semaphore.tryAcquire(Duration.ZERO), "ttl must be > 0");
    assertRule(() -> semaphore.acquire(shortTtl(), Duration.ofMillis(-1)), "maxWait must be >= 0");
    assertThrows(NullPointerException.class, () -> semaphore.tryAcquire(null));
    assertNowhere(semaphore.permitResource(0), "a refused request took a permit");
    assertNowhere(semaphore.permitResource(1), "a refused request took a permit");
  }
}
