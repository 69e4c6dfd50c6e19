package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockEvent;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The asynchronous API (issue 16 item 2) on real nodes: the same leases, errors and events as the
 * blocking one, no thread waiting between attempts, cancellation that rolls back, and a release on
 * every path of {@code withLockAsync}.
 */
class AsyncIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  static final Duration TTL = Duration.ofSeconds(5);
  static final Duration NO_HANG = Duration.ofSeconds(30);
  static final String PREFIX = RedlockConfig.DEFAULT_KEY_PREFIX;

  private static RedlockConfig.Builder config(List<String> uris) {
    return RedlockConfig.builder()
        .nodes(uris)
        .nodeTimeout(Duration.ofMillis(200))
        .retryDelay(Duration.ofMillis(20))
        .retryJitter(Duration.ofMillis(10));
  }

  private static long asyncThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("redlock-async-"))
        .count();
  }

  private static <T> T get(CompletableFuture<T> future) throws Exception {
    return future.get(NO_HANG.toSeconds(), TimeUnit.SECONDS);
  }

  private static Throwable failureOf(CompletableFuture<?> future) {
    ExecutionException e =
        assertThrows(
            ExecutionException.class, () -> future.get(NO_HANG.toSeconds(), TimeUnit.SECONDS));
    return e.getCause();
  }

  @Test
  void tryAcquireAsyncWinsAFreeLockAndSaysEmptyForAHeldOneWithTheSameEvents() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    List<LockEvent.Kind> events = new CopyOnWriteArrayList<>();
    try (Redlock a =
            Redlock.create(config(nodes.uris()).listener(e -> events.add(e.kind())).build());
        Redlock b = Redlock.create(config(nodes.uris()).build())) {
      Lease lease = get(a.tryAcquireAsync("async:try", TTL)).orElseThrow();
      assertTrue(lease.isValid());
      assertTrue(lease.fencingToken() > 0);
      assertEquals(Optional.empty(), get(b.tryAcquireAsync("async:try", TTL)));
      lease.release();
      assertTrue(
          events.contains(LockEvent.Kind.ATTEMPT) && events.contains(LockEvent.Kind.ACQUIRED));
      assertThrows(IllegalArgumentException.class, () -> a.tryAcquireAsync(" ", TTL));
      assertThrows(
          IllegalArgumentException.class, () -> a.acquireAsync("r", TTL, Duration.ofSeconds(-1)));
    }
  }

  /**
   * Forty callers wait for forty held locks at once: they hold futures, not threads; the library
   * runs attempts on its few async threads, and every one is granted once the holder lets go.
   */
  @Test
  void manyWaitersHoldFuturesNotThreadsAndAreGrantedWhenTheLocksFree() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock holder = Redlock.create(config(nodes.uris()).build());
        Redlock waiter = Redlock.create(config(nodes.uris()).build())) {
      List<Lease> held = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        held.add(holder.tryAcquire("async:many:" + i, TTL).orElseThrow());
      }
      List<CompletableFuture<Lease>> waiting = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        waiting.add(waiter.acquireAsync("async:many:" + i, TTL, NO_HANG));
      }
      long peak = 0;
      long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
      while (System.nanoTime() < until) { // a few retries' worth of sampling
        peak = Math.max(peak, asyncThreads());
        java.util.concurrent.locks.LockSupport.parkNanos(5_000_000);
      }
      assertTrue(
          peak <= 4, peak + " async threads for 40 waiters: more than the 4 attempt threads");
      assertTrue(waiting.stream().noneMatch(CompletableFuture::isDone), "granted while held");
      held.forEach(Lease::release);
      for (CompletableFuture<Lease> future : waiting) {
        Lease lease = get(future);
        assertTrue(lease.isValid());
        lease.release();
      }
    }
  }

  /** Cancelled while waiting: no retry after that, so the lock freed later is never taken. */
  @Test
  void aCancelledWaitTakesNothingLater() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock holder = Redlock.create(config(nodes.uris()).build());
        Redlock waiter = Redlock.create(config(nodes.uris()).build())) {
      Lease held = holder.tryAcquire("async:cancel", TTL).orElseThrow();
      CompletableFuture<Lease> future = waiter.acquireAsync("async:cancel", TTL, NO_HANG);
      await().atMost(NO_HANG).pollDelay(Duration.ofMillis(100)).until(() -> !future.isDone());
      assertTrue(future.cancel(true));
      String holders = Admin.get(nodes.node(0), PREFIX + "async:cancel"); // the holder's token
      held.release();
      // Ours must never appear (retries every 20-30 ms would take the lock at once).
      await("nothing taken after the cancel")
          .failFast(
              "the cancelled acquisition took the lock",
              () ->
                  nodes.all().stream()
                      .map(n -> Admin.get(n, PREFIX + "async:cancel"))
                      .anyMatch(v -> v != null && !v.equals(holders)))
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(2))
          .until(() -> true);
      assertThrows(CancellationException.class, future::join);
    }
  }

  /**
   * Cancelled while an attempt waits on a frozen node: the attempt is interrupted and rolls back on
   * the healthy nodes, and every reply is read (nothing left in flight).
   */
  @Test
  void aCancelDuringAnAttemptRollsBackAndLeavesNothingInFlight() throws Exception {
    FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(3));
    try (Redlock redlock =
        Redlock.create(config(nodes.uris()).nodeTimeout(Duration.ofSeconds(2)).build())) {
      redlock.tryAcquire("async:warm", TTL).orElseThrow().release();
      nodes.freezeLink(1);
      nodes.freezeLink(2); // no quorum: the attempt waits the node timeout on them
      CompletableFuture<Lease> future = redlock.acquireAsync("async:frozen", TTL, NO_HANG);
      await()
          .atMost(NO_HANG)
          .until(
              () ->
                  redlock.connectionsInUse().values().stream().mapToInt(Integer::intValue).sum()
                      > 0);
      assertTrue(future.cancel(true));
      nodes.restoreLinks();
      await("every reply read after the cancel")
          .atMost(NO_HANG)
          .until(() -> redlock.connectionsInUse().values().stream().allMatch(n -> n == 0));
      for (RedisNode node : nodes.nodes().all()) {
        await("rolled back on " + node.uri())
            .atMost(NO_HANG)
            .until(() -> Admin.get(node, PREFIX + "async:frozen") == null);
      }
    }
  }

  @Test
  void withLockAsyncReleasesOnEveryPathAndRenewsWhileTheStageRuns() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    RedisNode first = nodes.node(0);
    try (Redlock redlock = Redlock.create(config(nodes.uris()).build())) {
      // Succeeds: the value, and the lock released after.
      assertEquals(
          "done",
          get(
              redlock.withLockAsync(
                  "async:with", TTL, NO_HANG, lease -> CompletableFuture.completedFuture("done"))));
      assertNull(Admin.get(first, PREFIX + "async:with"));
      // The task throws.
      IllegalStateException thrown = new IllegalStateException("task threw");
      assertEquals(
          thrown,
          failureOf(
              redlock.withLockAsync(
                  "async:with",
                  TTL,
                  NO_HANG,
                  lease -> {
                    throw thrown;
                  })));
      assertNull(Admin.get(first, PREFIX + "async:with"));
      // Its stage fails.
      IllegalArgumentException failed = new IllegalArgumentException("stage failed");
      assertEquals(
          failed,
          failureOf(
              redlock.withLockAsync(
                  "async:with", TTL, NO_HANG, lease -> CompletableFuture.failedFuture(failed))));
      assertNull(Admin.get(first, PREFIX + "async:with"));
      // A stage that outlives three ttls: renewed meanwhile, held until it completes.
      Duration shortTtl = Duration.ofSeconds(1);
      CompletableFuture<String> slow = new CompletableFuture<>();
      AtomicReference<Lease> inTask = new AtomicReference<>();
      CompletableFuture<String> result =
          redlock.withLockAsync(
              "async:slow",
              shortTtl,
              NO_HANG,
              lease -> {
                inTask.set(lease);
                return slow;
              });
      await().atMost(NO_HANG).until(() -> inTask.get() != null);
      long grantedAt = System.nanoTime();
      await("held past three ttls")
          .atMost(NO_HANG)
          .until(() -> System.nanoTime() - grantedAt > shortTtl.multipliedBy(3).toNanos());
      assertTrue(inTask.get().isValid(), "renewed while the stage ran");
      assertTrue(Admin.get(first, PREFIX + "async:slow") != null);
      slow.complete("slow done");
      assertEquals("slow done", get(result));
      await().atMost(NO_HANG).until(() -> Admin.get(first, PREFIX + "async:slow") == null);
    }
  }

  @Test
  void closingFailsWhatIsStillWaiting() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock holder = Redlock.create(config(nodes.uris()).build())) {
      Lease held = holder.tryAcquire("async:close", TTL).orElseThrow();
      Redlock waiter = Redlock.create(config(nodes.uris()).build());
      CompletableFuture<Lease> future = waiter.acquireAsync("async:close", TTL, NO_HANG);
      waiter.close();
      assertInstanceOf(IllegalStateException.class, failureOf(future));
      assertThrows(
          IllegalStateException.class, () -> waiter.acquireAsync("async:close", TTL, NO_HANG));
      held.release();
    }
  }

  @Test
  void aWaitThatRunsOutFailsWithTheBlockingApisError() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock holder = Redlock.create(config(nodes.uris()).build());
        Redlock waiter = Redlock.create(config(nodes.uris()).build())) {
      Lease held = holder.tryAcquire("async:timeout", TTL).orElseThrow();
      Throwable failure =
          failureOf(waiter.acquireAsync("async:timeout", TTL, Duration.ofMillis(150)));
      LockUnavailableException e = assertInstanceOf(LockUnavailableException.class, failure);
      assertEquals(LockUnavailableException.Reason.HELD_ELSEWHERE, e.reason());
      held.release();
    }
  }
}
