package dev.redlock.spring.integration;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.spring.integration.Apps.Instance;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.Timing;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * The registry's lock contract, in two applications (two Spring contexts, each with a Redlock of
 * its own: two "JVMs") over three real redis-server nodes: mutual exclusion, reentrancy, who may
 * unlock, bounded and interruptible waits, fencing tokens, renewal, and what a lost lease does to
 * the unlock.
 */
class LockContractIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  static final Timing timing = Timing.get();
  static final Duration TTL = Duration.ofSeconds(2);
  static final String KEY = "ledger:2026-12-01";
  static final String NODE_KEY = "redlock:" + Apps.KEY_PREFIX + KEY;

  private ConfigurableApplicationContext appA;
  private ConfigurableApplicationContext appB;
  private RedlockLockRegistry a;
  private RedlockLockRegistry b;
  private final List<ExecutorService> threads = new ArrayList<>();

  @BeforeEach
  void twoApplications() {
    appA = Apps.start(new Instance("a", redis.uris(), TTL));
    appB = Apps.start(new Instance("b", redis.uris(), TTL));
    a = appA.getBean(RedlockLockRegistry.class);
    b = appB.getBean(RedlockLockRegistry.class);
  }

  @AfterEach
  void closeThem() {
    threads.forEach(ExecutorService::shutdownNow);
    appB.close();
    appA.close();
  }

  /** A thread of the test's own, on which {@link #on} runs calls in order. */
  ExecutorService thread(String name) {
    ExecutorService thread = Executors.newSingleThreadExecutor(r -> new Thread(r, name));
    threads.add(thread);
    return thread;
  }

  static <T> T on(ExecutorService thread, Callable<T> call) throws Exception {
    try {
      return thread.submit(call).get(timing.noHang().toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    }
  }

  @Test
  void twoApplicationsNeverHoldOneKeyAtOnceAndEachGrantHasALargerToken() throws Exception {
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger mostInside = new AtomicInteger();
    List<Long> tokensInGrantOrder = new ArrayList<>(); // written only inside the lock
    List<CompletableFuture<Void>> workers = new ArrayList<>();
    for (RedlockLockRegistry registry : List.of(a, b, a, b)) {
      ExecutorService worker = thread("worker-" + workers.size());
      workers.add(
          CompletableFuture.runAsync(
              () -> {
                for (int i = 0; i < 15; i++) {
                  RedlockLock lock = registry.obtain(KEY);
                  lock.lock();
                  try {
                    mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    synchronized (tokensInGrantOrder) {
                      tokensInGrantOrder.add(lock.fencingToken());
                    }
                    Thread.yield();
                  } finally {
                    inside.decrementAndGet();
                    lock.unlock();
                  }
                }
              },
              worker));
    }
    CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new))
        .get(timing.noHang().toMillis(), TimeUnit.MILLISECONDS);
    assertEquals(1, mostInside.get(), "holders inside at once");
    assertEquals(60, tokensInGrantOrder.size());
    for (int i = 1; i < tokensInGrantOrder.size(); i++) {
      assertTrue(
          tokensInGrantOrder.get(i) > tokensInGrantOrder.get(i - 1),
          "tokens in grant order: " + tokensInGrantOrder);
    }
  }

  @Test
  void aThreadThatHoldsTheLockMayLockItAgainAndOnlyTheLastUnlockReleasesIt() throws Exception {
    RedlockLock lock = a.obtain(KEY);
    lock.lock();
    long token = lock.fencingToken();
    Duration before = remainingOnceBelow(lock.lease(), TTL.minusSeconds(1));
    // With a wait: a reentrant tryLock() is false if the nodes are too slow to confirm the extend.
    assertTrue(lock.tryLock(timing.noHang(), TTL), "reentrant");
    assertEquals(token, lock.fencingToken(), "one lease for the whole hold");
    assertTrue(
        lock.lease().remainingValidity().compareTo(before) > 0,
        "a reentrant lock extends the lease to its ttl, as Spring's registries refresh it: "
            + before
            + " before, "
            + lock.lease().remainingValidity()
            + " after");
    lock.unlock();
    assertTrue(lock.isHeldByCurrentThread());
    assertEquals(3, redis.nodesWithKey(NODE_KEY), "still held on the nodes after one unlock");
    assertFalse(b.obtain(KEY).tryLock(), "the other application is refused");
    lock.unlock();
    assertFalse(lock.isHeldByCurrentThread());
    RedlockLock other = b.obtain(KEY);
    assertTrue(other.tryLock(timing.noHang().toMillis(), TimeUnit.MILLISECONDS), "released");
    assertTrue(other.fencingToken() > token);
    other.unlock();
  }

  @Test
  void anUnlockByAThreadThatDoesNotHoldTheLockIsRefused() throws Exception {
    RedlockLock lock = a.obtain(KEY);
    IllegalStateException never = assertThrows(IllegalStateException.class, lock::unlock);
    assertTrue(never.getMessage().contains("does not hold it"), never.getMessage());
    lock.lock();
    ExecutorService other = thread("other");
    for (Callable<Object> call :
        List.<Callable<Object>>of(
            () -> {
              lock.unlock();
              return null;
            },
            () -> {
              a.obtain(KEY).unlock();
              return null;
            },
            lock::fencingToken,
            () -> {
              a.renewLock(KEY);
              return null;
            })) {
      Exception refused = assertThrows(Exception.class, () -> on(other, call));
      assertInstanceOf(IllegalStateException.class, refused);
      assertTrue(refused.getMessage().contains("(other) does not hold it"), refused.getMessage());
    }
    assertFalse(on(other, () -> a.obtain(KEY).tryLock()), "another thread of the same registry");
    assertTrue(lock.isHeldByCurrentThread());
    assertEquals(3, redis.nodesWithKey(NODE_KEY), "still held");
    lock.unlock();
  }

  /**
   * Time passed as the library counts it for a wait (docs/leases.md): the monotonic clock, or the
   * wall clock where it stepped further forward (a suspend, a VM's time sync on resume).
   */
  private static Duration waited(long startedNanos, Instant startedOnTheWall) {
    Duration monotonic = Duration.ofNanos(System.nanoTime() - startedNanos);
    Duration wall = Duration.between(startedOnTheWall, Instant.now());
    return monotonic.compareTo(wall) >= 0 ? monotonic : wall;
  }

  @Test
  void tryLockGivesUpWithinItsWaitWhileTheLockIsHeldElsewhere() throws Exception {
    Duration wait = Duration.ofMillis(400);
    Duration bound = wait.plus(timing.scaled(Duration.ofSeconds(2))); // the wait and one attempt
    RedlockLock lock = a.obtain(KEY);
    lock.lock();
    long started = System.nanoTime();
    Instant startedOnTheWall = Instant.now();
    assertFalse(b.obtain(KEY).tryLock(wait.toMillis(), TimeUnit.MILLISECONDS), "other app");
    Duration took = waited(started, startedOnTheWall);
    assertTrue(took.compareTo(wait) >= 0 && took.compareTo(bound) < 0, "took " + took);

    started = System.nanoTime();
    startedOnTheWall = Instant.now();
    assertFalse(on(thread("same-app"), () -> a.obtain(KEY).tryLock(wait, TTL)), "same app");
    took = waited(started, startedOnTheWall);
    assertTrue(took.compareTo(wait) >= 0 && took.compareTo(bound) < 0, "took " + took);
    lock.unlock();
  }

  @Test
  void lockInterruptiblyStopsWaitingWhenInterruptedAndHoldsNothing() throws Exception {
    RedlockLock held = a.obtain(KEY);
    held.lock();
    CountDownLatch calling = new CountDownLatch(1);
    Thread waiter =
        new Thread(
            () -> {
              calling.countDown();
              try {
                b.obtain(KEY).lockInterruptibly();
              } catch (InterruptedException expected) {
                return;
              }
              throw new AssertionError("locked while held elsewhere");
            },
            "waiter");
    CompletableFuture<Thread.State> ended = new CompletableFuture<>();
    waiter.setUncaughtExceptionHandler((t, e) -> ended.completeExceptionally(e));
    waiter.start();
    calling.await();
    await().atMost(timing.noHang()).until(() -> waiter.getState() != Thread.State.RUNNABLE);
    waiter.interrupt();
    waiter.join(timing.noHang().toMillis());
    assertFalse(waiter.isAlive(), "lockInterruptibly returned on the interrupt");
    assertFalse(ended.isCompletedExceptionally(), "it threw InterruptedException");
    held.unlock();
    // The waiter left no hold behind in its registry: another of its threads gets the lock.
    RedlockLock next = b.obtain(KEY);
    assertTrue(on(thread("next"), () -> next.tryLock(timing.noHang(), TTL) && unlocked(next)));
  }

  @Test
  void lockKeepsWaitingThroughAnInterruptAndKeepsItForTheCaller() throws Exception {
    RedlockLock held = a.obtain(KEY);
    held.lock();
    CompletableFuture<Thread> waiter = new CompletableFuture<>();
    Future<long[]> lockedAtAndInterrupted =
        thread("waiter")
            .submit(
                () -> {
                  waiter.complete(Thread.currentThread());
                  RedlockLock lock = b.obtain(KEY);
                  lock.lock();
                  long lockedAt = System.nanoTime();
                  boolean interrupted = Thread.interrupted();
                  lock.unlock();
                  return new long[] {lockedAt, interrupted ? 1 : 0};
                });
    Thread thread = waiter.get(timing.noHang().toMillis(), TimeUnit.MILLISECONDS);
    await().atMost(timing.noHang()).until(() -> thread.getState() != Thread.State.RUNNABLE);
    thread.interrupt();
    await("still waiting after the interrupt")
        .during(Duration.ofMillis(300))
        .atMost(timing.noHang())
        .until(() -> !lockedAtAndInterrupted.isDone());
    long releasedAt = System.nanoTime();
    held.unlock();
    long[] result = lockedAtAndInterrupted.get(timing.noHang().toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(result[0] > releasedAt, "locked only once released");
    assertEquals(1, result[1], "the interrupt is kept for the caller");
  }

  @Test
  void theFencingTokenGrowsFromHolderToHolder() throws Exception {
    long[] tokens = new long[3];
    int i = 0;
    for (RedlockLockRegistry registry : List.of(a, b, a)) {
      RedlockLock lock = registry.obtain(KEY);
      assertTrue(lock.tryLock(timing.noHang(), TTL));
      tokens[i++] = lock.fencingToken();
      assertEquals(tokens[i - 1], lock.lease().fencingToken());
      lock.unlock();
    }
    assertTrue(
        tokens[0] > 0 && tokens[1] > tokens[0] && tokens[2] > tokens[1],
        tokens[0] + " " + tokens[1] + " " + tokens[2]);
  }

  @Test
  void renewLockKeepsTheLockPastItsOriginalTtl() throws Exception {
    Duration ttl = Duration.ofMillis(800);
    RedlockLock lock = a.obtain(KEY);
    long started = System.nanoTime();
    lock.lock(ttl);
    a.renewLock(KEY, Duration.ofSeconds(5));
    await()
        .atMost(timing.noHang())
        .until(() -> System.nanoTime() - started > ttl.multipliedBy(2).toNanos());
    assertTrue(lock.lease().isValid(), "valid at twice the original ttl");
    assertFalse(b.obtain(KEY).tryLock(), "still held: the other application is refused");
    a.renewLock(KEY); // the registry's ttl
    assertEquals(3, redis.nodesWithKey(NODE_KEY));
    lock.unlock(); // no ConcurrentModificationException: the lease never lapsed

    IllegalStateException notHeld =
        assertThrows(IllegalStateException.class, () -> a.renewLock(KEY));
    assertTrue(notHeld.getMessage().contains("does not hold it"), notHeld.getMessage());
  }

  @Test
  void anUnlockAfterTheLeaseWasLostThrowsAndReleasesNothingOfTheNextHolder() throws Exception {
    RedlockLock lock = a.obtain(KEY);
    lock.lock(Duration.ofMillis(600));
    Lease lost = lock.lease();
    await().atMost(timing.noHang()).until(() -> !lost.isValid());
    RedlockLock next = b.obtain(KEY);
    assertTrue(next.tryLock(timing.noHang(), TTL), "the next holder got it after the ttl");

    ConcurrentModificationException e =
        assertThrows(ConcurrentModificationException.class, lock::unlock);
    assertTrue(e.getMessage().contains("ended before unlock"), e.getMessage());
    assertFalse(lock.isHeldByCurrentThread(), "nothing left held locally");
    assertEquals(3, redis.nodesWithKey(NODE_KEY), "the next holder's key is untouched");
    assertFalse(a.obtain(KEY).tryLock(), "and it still excludes the first application");
    next.unlock();
    assertTrue(lock.tryLock(timing.noHang(), TTL), "the first application may lock it again");
    lock.unlock();
  }

  @Test
  void aReentrantLockAfterTheLeaseWasLostTakesANewOneAndTheLastUnlockReportsTheGap() {
    RedlockLock lock = a.obtain(KEY);
    lock.lock(Duration.ofMillis(600));
    long first = lock.fencingToken();
    Lease lost = lock.lease();
    await().atMost(timing.noHang()).until(() -> !lost.isValid());
    lock.lock();
    assertTrue(lock.fencingToken() > first, "a new lease, a new token");
    assertTrue(lock.lease().isValid());
    lock.unlock();
    assertThrows(ConcurrentModificationException.class, lock::unlock, "the outer hold had a gap");
    assertFalse(lock.isHeldByCurrentThread());
    await("the new lease released")
        .atMost(timing.noHang())
        .until(() -> redis.nodesWithKey(NODE_KEY) == 0);
  }

  /**
   * A reentrant tryLock that found its lease lost while the lock was held elsewhere holds no lease
   * then; a later one asks the store again, as Spring's registries do (a leader initiator keeps its
   * hold and leads again once the other leader is gone).
   */
  @Test
  void aReentrantTryLockThatCouldNotReplaceALostLeaseTakesTheLockOnceItIsFree() throws Exception {
    RedlockLock lock = a.obtain(KEY);
    lock.lock(Duration.ofMillis(600));
    Lease lost = lock.lease();
    await().atMost(timing.noHang()).until(() -> !lost.isValid());
    RedlockLock other = b.obtain(KEY);
    assertTrue(other.tryLock(timing.noHang().toMillis(), TimeUnit.MILLISECONDS));
    assertFalse(lock.tryLock(100, TimeUnit.MILLISECONDS), "held elsewhere");
    other.unlock();
    assertTrue(lock.tryLock(timing.noHang().toMillis(), TimeUnit.MILLISECONDS), "free again");
    assertTrue(lock.lease().isValid());
    lock.unlock();
    assertThrows(ConcurrentModificationException.class, lock::unlock, "the outer hold had a gap");
    assertFalse(lock.isHeldByCurrentThread());
  }

  /**
   * An application shut down while one of its threads holds a lock: Spring closes the registry
   * before the Redlock (whose close releases every lease), and the registry waits for the unlock,
   * so the other application cannot take the lock meanwhile.
   */
  @Test
  void aShutdownWaitsForALockHeldByARunningThread() throws Exception {
    ExecutorService worker = thread("worker");
    on(
        worker,
        () -> {
          a.obtain(KEY).lock();
          return null;
        });
    CompletableFuture<Void> closed = CompletableFuture.runAsync(appA::close);
    await("the shutdown waits")
        .during(Duration.ofMillis(600))
        .atMost(timing.noHang())
        .until(() -> !closed.isDone() && !b.obtain(KEY).tryLock());
    on(
        worker,
        () -> {
          a.obtain(KEY).unlock();
          return null;
        });
    closed.get(timing.noHang().toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(b.obtain(KEY).tryLock(), "free once unlocked");
    b.obtain(KEY).unlock();
  }

  @Test
  void badArgumentsFailAtOnceNamingTheParameter() {
    Redlock redlock = appA.getBean(Redlock.class);
    assertMessage(
        NullPointerException.class, "redlock", () -> RedlockLockRegistry.builder(null, TTL));
    assertMessage(
        NullPointerException.class, "ttl", () -> RedlockLockRegistry.builder(redlock, null));
    assertMessage(
        IllegalArgumentException.class,
        "ttl must be > the Redlock's nodeTimeout",
        () -> RedlockLockRegistry.builder(redlock, Duration.ZERO));
    assertMessage(
        IllegalArgumentException.class,
        "ttl must be <= the Redlock's maxTtl",
        () -> RedlockLockRegistry.builder(redlock, Duration.ofMinutes(2)));
    assertMessage(
        NullPointerException.class,
        "keyPrefix",
        () -> RedlockLockRegistry.builder(redlock, TTL).keyPrefix(null));
    assertMessage(
        IllegalArgumentException.class,
        "keyPrefix must be empty or not blank",
        () -> RedlockLockRegistry.builder(redlock, TTL).keyPrefix(" "));
    assertMessage(NullPointerException.class, "lockKey", () -> a.obtain(null));
    assertMessage(IllegalArgumentException.class, "lockKey must be a String", () -> a.obtain(42L));
    assertMessage(IllegalArgumentException.class, "lockKey must not be blank", () -> a.obtain(" "));
    assertMessage(NullPointerException.class, "ttl", () -> a.obtain(KEY).lock(null));
    assertMessage(NullPointerException.class, "waitTime", () -> a.obtain(KEY).tryLock(null, TTL));
    assertMessage(NullPointerException.class, "ttl", () -> a.renewLock(KEY, null));
    assertMessage(
        UnsupportedOperationException.class, "Conditions", () -> a.obtain(KEY).newCondition());
    assertMessage(
        UnsupportedOperationException.class,
        "renewLock",
        () -> a.setRenewalTaskScheduler(new ThreadPoolTaskScheduler()));
    assertEquals(a.obtain(KEY), a.obtain(KEY), "one key, one lock");
    assertFalse(a.obtain(KEY).equals(b.obtain(KEY)), "registries do not share locks");
    assertEquals("si:" + KEY, a.obtain(KEY).resource());
    assertFalse(a.obtain(KEY).isHeldByCurrentThread(), "a bad call holds nothing");
  }

  @Test
  void aQuorumOfNodesDownIsNotReportedAsABusyLock() {
    redis.nodes().node(0).pause();
    redis.nodes().node(1).pause();
    try {
      Lock lock = a.obtain(KEY);
      CannotAcquireLockException broken =
          assertThrows(
              CannotAcquireLockException.class, () -> lock.tryLock(300, TimeUnit.MILLISECONDS));
      LockUnavailableException cause =
          assertInstanceOf(LockUnavailableException.class, broken.getCause());
      assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, cause.reason());
      assertFalse(a.obtain(KEY).isHeldByCurrentThread(), "nothing held");
    } finally {
      redis.nodes().heal();
    }
  }

  static boolean unlocked(Lock lock) {
    lock.unlock();
    return true;
  }

  static Duration remainingOnceBelow(Lease lease, Duration below) {
    await().atMost(timing.noHang()).until(() -> lease.remainingValidity().compareTo(below) < 0);
    return lease.remainingValidity();
  }

  static void assertMessage(
      Class<? extends Throwable> type,
      String part,
      org.junit.jupiter.api.function.Executable call) {
    Throwable thrown = assertThrows(type, call);
    assertTrue(thrown.getMessage().contains(part), "'" + part + "' in: " + thrown.getMessage());
  }
}
