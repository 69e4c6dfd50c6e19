package dev.redlock.shedlock;

import static dev.redlock.shedlock.NodesView.assertThroughout;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What this provider adds to ShedLock's contract, on three real redis-server nodes behind fault
 * proxies: {@code lockAtLeastFor} kept after unlock and released on time, extend's new lock, the
 * fencing token a job reads ({@link CurrentLock}), a frozen minority, bad input and closing.
 */
@ExtendWith(NoLockLeft.class)
class RedlockLockProviderIT {
  static final Timing TIMING = Timing.get();
  static final Duration NO_HANG = TIMING.noHang();
  static final Duration NODE_TIMEOUT = TIMING.scaled(Duration.ofMillis(500));
  static final Duration TTL = TIMING.scaled(Duration.ofSeconds(10));

  @RegisterExtension
  static final RedisFixture redis = RedisFixture.perClassBehindProxies(RedisFixture.nodes(3));

  FaultyNodes faulty;
  NodesView nodes;
  String name;

  @BeforeEach
  void nodes() {
    faulty = redis.faultyNodes();
    nodes = new NodesView(faulty.nodes().uris());
    name = "job-" + redis.testName();
  }

  /** A Redlock of its own, on links of its own ({@code client}), closed after the test. */
  static Redlock redlock(String client) {
    return redis.client(
        RedlockConfig.builder()
            .nodes(redis.faultyNodes().uris(client))
            .nodeTimeout(NODE_TIMEOUT)
            .build());
  }

  /** A provider on a Redlock of its own, both closed after the test. */
  static RedlockLockProvider provider(String client) {
    return redis.closeAfter(RedlockLockProvider.create(redlock(client)));
  }

  static LockConfiguration config(String name, Duration lockAtMostFor, Duration lockAtLeastFor) {
    return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, lockAtLeastFor);
  }

  static RedlockSimpleLock present(Optional<SimpleLock> lock) {
    assertTrue(lock.isPresent(), "not locked");
    return (RedlockSimpleLock) lock.get();
  }

  static long millisSince(long start) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  // ---- lockAtLeastFor --------------------------------------------------------------------------

  @Test
  void anUnlockedLockKeepsOthersOutUntilLockAtLeastForThenIsReleasedOnTime() {
    RedlockLockProvider a = provider("a");
    RedlockLockProvider b = provider("b");
    Duration atLeast = TIMING.scaled(Duration.ofMillis(1500));
    long start = System.nanoTime();
    present(a.lock(config(name, TTL, atLeast))).unlock();
    Duration window = atLeast.minusMillis(millisSince(start) + 200);
    assertThroughout(
        window, "another instance locked before lockAtLeastFor", () -> refused(b, name));
    RedlockSimpleLock next =
        await("the lock is released after lockAtLeastFor")
            .atMost(NO_HANG)
            .pollInterval(Duration.ofMillis(20))
            .until(() -> b.lock(config(name, TTL, Duration.ZERO)), Optional::isPresent)
            .map(RedlockSimpleLock.class::cast)
            .get();
    long held = millisSince(start);
    assertTrue(held >= atLeast.toMillis(), "locked again after " + held + " ms");
    // released by the provider at lockAtLeastFor, not left to run out at lockAtMostFor
    assertTrue(held < TTL.toMillis(), "locked again only after " + held + " ms");
    next.unlock();
  }

  private static boolean refused(RedlockLockProvider provider, String name) {
    Optional<SimpleLock> lock = provider.lock(config(name, TTL, Duration.ZERO));
    lock.ifPresent(SimpleLock::unlock);
    return lock.isEmpty();
  }

  @Test
  void aLockUnlockedAfterLockAtLeastForIsReleasedAtOnce() {
    RedlockLockProvider a = provider("a");
    RedlockLockProvider b = provider("b");
    Duration atLeast = TIMING.scaled(Duration.ofMillis(300));
    long start = System.nanoTime();
    RedlockSimpleLock lock = present(a.lock(config(name, TTL, atLeast)));
    await("lockAtLeastFor passes")
        .atMost(NO_HANG)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> millisSince(start) > atLeast.toMillis());
    lock.unlock();
    nodes.assertFree(name);
    present(b.lock(config(name, TTL, Duration.ZERO))).unlock();
  }

  // ---- extend ----------------------------------------------------------------------------------

  @Test
  void extendGivesANewLockOnTheSameLeaseAndUsesTheOldOneUp() {
    RedlockLockProvider a = provider("a");
    RedlockSimpleLock old = present(a.lock(config(name, TTL, Duration.ZERO)));
    RedlockSimpleLock extended = present(old.extend(TTL, Duration.ZERO));
    assertNotSame(old, extended);
    assertEquals(old.fencingToken(), extended.fencingToken(), "one lease, one token");
    assertThrows(IllegalStateException.class, old::unlock);
    assertThrows(IllegalStateException.class, () -> old.extend(TTL, Duration.ZERO));
    assertThrows(IllegalStateException.class, old::checkValid);
    extended.checkValid();
    nodes.assertHeld(name);
    extended.unlock();
    nodes.assertFree(name);
    assertThrows(IllegalStateException.class, extended::unlock);
  }

  @Test
  void aRefusedExtendLeavesTheLockUsable() {
    RedlockLockProvider a = provider("a");
    RedlockSimpleLock lock = present(a.lock(config(name, TTL, Duration.ZERO)));
    IllegalArgumentException tooLong =
        assertThrows(
            IllegalArgumentException.class,
            () -> lock.extend(Duration.ofMinutes(2), Duration.ZERO));
    assertTrue(tooLong.getMessage().contains("lockAtMostFor PT2M"), tooLong.getMessage());
    assertTrue(tooLong.getMessage().contains("maxTtl"), tooLong.getMessage());
    IllegalArgumentException atLeast =
        assertThrows(
            IllegalArgumentException.class,
            () -> lock.extend(Duration.ofSeconds(1), Duration.ofSeconds(2)));
    assertEquals(
        "lockAtLeastFor must be >= 0 and <= lockAtMostFor (PT1S), was PT2S", atLeast.getMessage());
    assertThrows(NullPointerException.class, () -> lock.extend(null, Duration.ZERO));
    lock.unlock();
    nodes.assertFree(name);
  }

  // ---- the fencing token, read by the job ------------------------------------------------------

  @Test
  void fencingTokensGrowAcrossHoldersAndEachJobReadsItsOwn() throws Throwable {
    List<LockingTaskExecutor> instances =
        List.of(
            new DefaultLockingTaskExecutor(provider("a")),
            new DefaultLockingTaskExecutor(provider("b")));
    assertEquals(Optional.empty(), CurrentLock.find());
    assertThrows(IllegalStateException.class, CurrentLock::fencingToken);
    List<Long> tokens = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      LockingTaskExecutor.TaskResult<Long> run =
          instances
              .get(i % 2)
              .executeWithLock(
                  () -> {
                    assertEquals(name, CurrentLock.get().name());
                    nodes.assertHeld(CurrentLock.get().resource());
                    return CurrentLock.fencingToken();
                  },
                  config(name, TTL, Duration.ZERO));
      assertTrue(run.wasExecuted());
      tokens.add(run.getResult());
    }
    for (int i = 1; i < tokens.size(); i++) {
      assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens not growing: " + tokens);
    }
    assertEquals(Optional.empty(), CurrentLock.find(), "left set after the job");
  }

  @Test
  void aNestedJobSeesItsOwnLockAndLockExtenderItsNewOne() throws Throwable {
    LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider("a"));
    executor.executeWithLock(
        (LockingTaskExecutor.Task)
            () -> {
              RedlockSimpleLock outer = CurrentLock.get();
              assertEquals(name, outer.name());
              executor.executeWithLock(
                  (LockingTaskExecutor.Task)
                      () -> {
                        RedlockSimpleLock inner = CurrentLock.get();
                        assertEquals(name + "-inner", inner.name());
                        assertTrue(inner.fencingToken() != outer.fencingToken());
                        LockExtender.extendActiveLock(TTL, Duration.ZERO);
                        RedlockSimpleLock extended = CurrentLock.get();
                        assertNotSame(inner, extended);
                        assertEquals(inner.fencingToken(), extended.fencingToken());
                      },
                  config(name + "-inner", TTL, Duration.ZERO));
              assertEquals(outer, CurrentLock.get(), "the outer lock again");
              nodes.assertFree(name + "-inner");
            },
        config(name, TTL, Duration.ZERO));
    assertEquals(Optional.empty(), CurrentLock.find());
  }

  // ---- a frozen minority -----------------------------------------------------------------------

  @Test
  void aNodeFrozenWhileAJobRunsNeitherLetsASecondRunInNorKeepsTheLock() throws Throwable {
    RedlockLockProvider a = provider("a");
    RedlockLockProvider b = provider("b");
    new DefaultLockingTaskExecutor(a)
        .executeWithLock(
            (LockingTaskExecutor.Task)
                () -> {
                  faulty.freezeLink(0);
                  assertEquals(Optional.empty(), b.lock(config(name, TTL, Duration.ZERO)));
                  nodes.assertHeld(name);
                },
            config(name, TTL, Duration.ZERO));
    // released on the two nodes that answer: the lock is free for the other instance
    present(b.lock(config(name, TTL, Duration.ZERO))).unlock();
  }

  /**
   * Two instances race for one job while node 2 is frozen, then node 0 instead: the runs never
   * overlap, their tokens grow, and there are runs in both phases. With a node frozen, two
   * instances can split the two nodes left; neither wins then, and that attempt ends in a {@link
   * LockUnavailableException} (quorum unreachable), which ShedLock reports and skips: counted here,
   * not a failure.
   */
  @Test
  void aFrozenMinorityStillLocksAndNeverRunsAJobTwiceAtOnce() throws Exception {
    List<Run> runs = new CopyOnWriteArrayList<>();
    AtomicInteger splits = new AtomicInteger();
    AtomicBoolean stop = new AtomicBoolean();
    faulty.freezeLink(2);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<?>> racers = new ArrayList<>();
      for (String instance : List.of("a", "b")) {
        LockingTaskExecutor executor = new DefaultLockingTaskExecutor(provider(instance));
        racers.add(
            pool.submit(
                () -> {
                  while (!stop.get()) {
                    try {
                      executor.executeWithLock(
                          (Runnable) () -> runs.add(Run.of(CurrentLock.fencingToken())),
                          config(name, TTL, Duration.ZERO));
                    } catch (LockUnavailableException e) {
                      assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
                      splits.incrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      await("runs with node 2 frozen").atMost(NO_HANG).until(() -> runs.size() >= 20);
      faulty.restoreLinks(2);
      faulty.freezeLink(0);
      int beforeSwitch = runs.size();
      await("runs with node 0 frozen")
          .atMost(NO_HANG)
          .until(() -> runs.size() >= beforeSwitch + 20);
      stop.set(true);
      for (Future<?> racer : racers) {
        racer.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      stop.set(true);
      pool.shutdownNow();
    }
    List<Run> byStart = new ArrayList<>(runs);
    byStart.sort(Comparator.comparingLong(Run::start));
    for (int i = 1; i < byStart.size(); i++) {
      Run before = byStart.get(i - 1);
      Run after = byStart.get(i);
      String counts = " (" + runs.size() + " runs, " + splits + " split attempts)";
      assertTrue(before.end() < after.start(), "overlapping: " + before + ", " + after + counts);
      assertTrue(before.token() < after.token(), "token order: " + before + ", " + after + counts);
    }
  }

  /** One run of the job: its token and when it started and ended (monotonic nanos). */
  record Run(long token, long start, long end) {
    static Run of(long token) {
      long start = System.nanoTime();
      Thread.yield(); // the job's work: long enough for a second run to start inside it
      return new Run(token, start, System.nanoTime());
    }
  }

  // ---- bad input and closing -------------------------------------------------------------------

  @Test
  void badInputFailsAtOnceNamingTheParameterAndTheRule() {
    Redlock redlock = redlock("a");
    assertEquals(
        "redlock must not be null",
        assertThrows(NullPointerException.class, () -> RedlockLockProvider.create(null))
            .getMessage());
    assertEquals(
        "namePrefix must not be null",
        assertThrows(NullPointerException.class, () -> RedlockLockProvider.create(redlock, null))
            .getMessage());
    assertEquals(
        "namePrefix must be empty or hold more than whitespace, was '  '",
        assertThrows(
                IllegalArgumentException.class, () -> RedlockLockProvider.create(redlock, "  "))
            .getMessage());
    RedlockLockProvider provider = redis.closeAfter(RedlockLockProvider.create(redlock));
    assertEquals(
        "lockConfiguration must not be null",
        assertThrows(NullPointerException.class, () -> provider.lock(null)).getMessage());
    String overMax =
        assertThrows(
                IllegalArgumentException.class,
                () -> provider.lock(config(name, Duration.ofMinutes(2), Duration.ZERO)))
            .getMessage();
    assertTrue(overMax.startsWith("cannot lock '" + name + "'"), overMax);
    assertTrue(overMax.contains("lockAtMostFor PT2M as its ttl"), overMax);
    assertTrue(overMax.contains("ttl must be <= maxTtl (PT1M)"), overMax);
    String underFloor =
        assertThrows(
                IllegalArgumentException.class,
                () -> provider.lock(config(name, Duration.ofMillis(2), Duration.ZERO)))
            .getMessage();
    assertTrue(underFloor.contains("lockAtMostFor PT0.002S as its ttl"), underFloor);
    assertTrue(underFloor.contains("ttl must be > nodeTimeout + clock drift"), underFloor);
    String reserved =
        assertThrows(
                IllegalArgumentException.class,
                () -> provider.lock(config("@life", TTL, Duration.ZERO)))
            .getMessage();
    assertTrue(reserved.contains("resource must not start with '@'"), reserved);
    nodes.assertFree(name);
  }

  @Test
  void closingWaitsForRunningJobsThenForLockAtLeastForThenStopsTheTimer() throws Exception {
    Redlock redlock = redlock("a");
    RedlockLockProvider provider = RedlockLockProvider.create(redlock);
    Duration atLeast = TIMING.scaled(Duration.ofMillis(800));
    long start = System.nanoTime();
    present(provider.lock(config(name, TTL, atLeast))).unlock(); // the timer waits for it
    RedlockSimpleLock running = present(provider.lock(config(name + "-2", TTL, atLeast)));
    assertTrue(releaseThreadAlive());
    CompletableFuture<Void> closed = CompletableFuture.runAsync(provider::close);
    assertThroughout(
        atLeast.plus(atLeast), "close() returned while a job ran", () -> !closed.isDone());
    nodes.assertHeld(name + "-2");
    assertThrows(
        IllegalStateException.class, () -> provider.lock(config(name, TTL, Duration.ZERO)));
    long unlocked = System.nanoTime();
    running.unlock(); // the job ends: its lockAtLeastFor has passed, released now
    closed.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(millisSince(start) >= 2 * atLeast.toMillis(), "closed after " + millisSince(start));
    assertTrue(millisSince(unlocked) < NO_HANG.toMillis());
    nodes.assertFree(name);
    nodes.assertFree(name + "-2");
    assertFalse(releaseThreadAlive(), "the timer outlived close()");
    provider.close(); // idempotent
  }

  /** A pool thread that locks and has another thread unlock keeps none of those locks. */
  @Test
  void locksUnlockedOnAnotherThreadDoNotPileUpOnTheLockingThread() throws Exception {
    RedlockLockProvider provider = provider("a");
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      for (int i = 0; i < 20; i++) {
        SimpleLock lock = present(provider.lock(config(name + i, TTL, Duration.ZERO)));
        other.submit(lock::unlock).get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      other.shutdownNow();
    }
    java.lang.reflect.Field field = CurrentLock.class.getDeclaredField("HELD");
    field.setAccessible(true);
    java.util.Collection<?> held =
        (java.util.Collection<?>) ((ThreadLocal<?>) field.get(null)).get();
    assertTrue(held == null || held.size() <= 1, "kept by this thread: " + held);
    assertTrue(CurrentLock.find().isEmpty());
  }

  @Test
  void closingTheRedlockReleasesALockKeptForLockAtLeastForAtOnce() {
    Redlock redlock = redlock("a");
    RedlockLockProvider provider = redis.closeAfter(RedlockLockProvider.create(redlock));
    present(provider.lock(config(name, TTL, TIMING.scaled(Duration.ofSeconds(1))))).unlock();
    nodes.assertHeld(name);
    redlock.close(); // the caveat operations.md names: close the provider first
    nodes.assertFree(name);
  }

  private static boolean releaseThreadAlive() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals(DelayedReleases.THREAD_NAME) && t.isAlive());
  }
}
