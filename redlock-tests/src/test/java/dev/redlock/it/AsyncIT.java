package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockEvent;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
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

  /** Throws {@code e} without declaring it, as Kotlin or Lombok's @SneakyThrows can. */
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> CompletableFuture<String> sneaky(Throwable e) throws E {
    throw (E) e;
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
    java.util.Map<String, Integer> tries = new java.util.concurrent.ConcurrentHashMap<>();
    try (Redlock holder = Redlock.create(config(nodes.uris()).build());
        Redlock waiter =
            Redlock.create(
                config(nodes.uris())
                    .listener(
                        e -> {
                          if (e.kind() == LockEvent.Kind.ATTEMPT) {
                            tries.merge(e.resource(), 1, Integer::sum);
                          }
                        })
                    .build())) {
      List<Lease> held = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        held.add(holder.tryAcquire("async:many:" + i, Duration.ofSeconds(30)).orElseThrow());
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
      // Every waiter kept trying meanwhile (a timer per waiter, not a thread): none was starved.
      await("every waiter retried")
          .atMost(NO_HANG)
          .until(() -> tries.size() == 40 && tries.values().stream().allMatch(n -> n >= 3));
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
    java.util.concurrent.atomic.AtomicInteger attempts =
        new java.util.concurrent.atomic.AtomicInteger();
    try (Redlock holder = Redlock.create(config(nodes.uris()).build());
        Redlock waiter =
            Redlock.create(
                config(nodes.uris())
                    .listener(
                        e -> {
                          if (e.kind() == LockEvent.Kind.ATTEMPT) {
                            attempts.incrementAndGet();
                          }
                        })
                    .build())) {
      Lease held = holder.tryAcquire("async:cancel", TTL).orElseThrow();
      CompletableFuture<Lease> future = waiter.acquireAsync("async:cancel", TTL, NO_HANG);
      await("it retries").atMost(NO_HANG).until(() -> attempts.get() >= 2);
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
   * Cancelled while an attempt waits on two frozen nodes: the attempt is interrupted and rolls back
   * on the healthy node at once — long before the 10 s node timeout it would otherwise wait, and
   * the 60 s ttl the key would otherwise hold — and once the links are back every reply is read.
   */
  @Test
  void aCancelDuringAnAttemptRollsBackAtOnceAndLeavesNothingInFlight() throws Exception {
    FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(3));
    Duration longTtl = Duration.ofSeconds(60);
    try (Redlock redlock =
        Redlock.create(config(nodes.uris()).nodeTimeout(Duration.ofSeconds(10)).build())) {
      redlock.tryAcquire("async:warm", longTtl).orElseThrow().release();
      nodes.freezeLink(1);
      nodes.freezeLink(2); // no quorum: the attempt waits on them
      CompletableFuture<Lease> future = redlock.acquireAsync("async:frozen", longTtl, NO_HANG);
      RedisNode healthy = nodes.nodes().node(0);
      await("the attempt's SET NX on the healthy node")
          .atMost(NO_HANG)
          .until(() -> Admin.get(healthy, PREFIX + "async:frozen") != null);
      assertTrue(future.cancel(true));
      await("rolled back on the healthy node while the others are still frozen")
          .atMost(Duration.ofSeconds(3))
          .until(() -> Admin.get(healthy, PREFIX + "async:frozen") == null);
      nodes.restoreLinks();
      await("every reply read after the cancel")
          .atMost(NO_HANG)
          .until(() -> redlock.requestsInFlight().values().stream().allMatch(n -> n == 0));
      for (RedisNode node : nodes.nodes().all()) {
        await("rolled back on " + node.uri())
            .atMost(NO_HANG)
            .until(() -> Admin.get(node, PREFIX + "async:frozen") == null);
      }
    }
  }

  /** No key of {@code resource} on any node (a release returns on a quorum: the rest follow). */
  private static void awaitReleased(List<RedisNode> nodes, String resource) {
    await(resource + " released on every node")
        .atMost(NO_HANG)
        .until(() -> nodes.stream().allMatch(n -> Admin.get(n, PREFIX + resource) == null));
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
      awaitReleased(nodes.all(), "async:with");
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
      awaitReleased(nodes.all(), "async:with");
      // Its stage fails.
      IllegalArgumentException failed = new IllegalArgumentException("stage failed");
      assertEquals(
          failed,
          failureOf(
              redlock.withLockAsync(
                  "async:with", TTL, NO_HANG, lease -> CompletableFuture.failedFuture(failed))));
      awaitReleased(nodes.all(), "async:with");
      // A task that throws a checked exception it does not declare (Kotlin, @SneakyThrows).
      assertInstanceOf(
          java.io.IOException.class,
          failureOf(
              redlock.withLockAsync(
                  "async:with",
                  TTL,
                  NO_HANG,
                  lease -> AsyncIT.<RuntimeException>sneaky(new java.io.IOException("sneaky")))));
      awaitReleased(nodes.all(), "async:with");
      // A task that returns null: the lock is released all the same.
      assertInstanceOf(
          NullPointerException.class,
          failureOf(redlock.withLockAsync("async:with", TTL, NO_HANG, lease -> null)));
      awaitReleased(nodes.all(), "async:with");
      // A stage that outlives two ttls: renewed meanwhile, held until it completes.
      Duration shortTtl = Duration.ofSeconds(2);
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
      await("held past two ttls")
          .atMost(NO_HANG)
          .until(() -> System.nanoTime() - grantedAt > shortTtl.multipliedBy(2).toNanos());
      assertTrue(inTask.get().isValid(), "renewed while the stage ran");
      assertTrue(Admin.get(first, PREFIX + "async:slow") != null);
      slow.complete("slow done");
      assertEquals("slow done", get(result));
      awaitReleased(nodes.all(), "async:slow");
    }
  }

  /**
   * The lease is lost while the stage runs (two of three links frozen: renewals cannot reach a
   * quorum): the stage is cancelled, as withLock interrupts its task, and the future fails with the
   * loss, not the stage's value.
   */
  @Test
  void aLeaseLostWhileTheStageRunsCancelsItAndFailsWithTheLoss() throws Exception {
    FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(3));
    try (Redlock redlock = Redlock.create(config(nodes.uris()).build())) {
      CompletableFuture<String> stage = new CompletableFuture<>();
      AtomicReference<Lease> inTask = new AtomicReference<>();
      CompletableFuture<String> result =
          redlock.withLockAsync(
              "async:lost",
              Duration.ofSeconds(1),
              NO_HANG,
              lease -> {
                inTask.set(lease);
                return stage;
              });
      await().atMost(NO_HANG).until(() -> inTask.get() != null);
      nodes.freezeLink(1);
      nodes.freezeLink(2);
      assertInstanceOf(dev.redlock.LeaseLostException.class, failureOf(result));
      assertTrue(stage.isCancelled(), "the stage was cancelled on the loss");
      nodes.restoreLinks();
    }
  }

  /** orTimeout on the future stops the acquisition as a cancel does: it takes nothing later. */
  @Test
  void aFutureTimedOutByItsCallerTakesNothingLater() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock holder = Redlock.create(config(nodes.uris()).build());
        Redlock waiter = Redlock.create(config(nodes.uris()).build())) {
      Lease held = holder.tryAcquire("async:timedout", TTL).orElseThrow();
      CompletableFuture<Lease> future =
          waiter.acquireAsync("async:timedout", TTL, NO_HANG).orTimeout(100, TimeUnit.MILLISECONDS);
      assertInstanceOf(java.util.concurrent.TimeoutException.class, failureOf(future));
      String holders = Admin.get(nodes.node(0), PREFIX + "async:timedout");
      held.release();
      await("nothing taken after the timeout")
          .failFast(
              "the timed-out acquisition took the lock",
              () ->
                  nodes.all().stream()
                      .map(n -> Admin.get(n, PREFIX + "async:timedout"))
                      .anyMatch(v -> v != null && !v.equals(holders)))
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(2))
          .until(() -> true);
    }
  }

  @Test
  void closingFailsWhatIsStillWaiting() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    List<LockEvent.Kind> events = new CopyOnWriteArrayList<>();
    try (Redlock holder = Redlock.create(config(nodes.uris()).build())) {
      Redlock waiter =
          Redlock.create(config(nodes.uris()).listener(e -> events.add(e.kind())).build());
      try {
        Lease held = holder.tryAcquire("async:close", TTL).orElseThrow();
        CompletableFuture<Lease> future = waiter.acquireAsync("async:close", TTL, NO_HANG);
        await("it has tried").atMost(NO_HANG).until(() -> events.contains(LockEvent.Kind.ATTEMPT));
        waiter.close();
        assertInstanceOf(IllegalStateException.class, failureOf(future));
        assertThrows(
            IllegalStateException.class, () -> waiter.acquireAsync("async:close", TTL, NO_HANG));
        await("its async threads end").atMost(NO_HANG).until(() -> asyncThreads() == 0);
        held.release();
      } finally {
        waiter.close(); // idempotent
      }
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
