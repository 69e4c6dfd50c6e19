package dev.redlock.bench;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.ReadWriteLock;
import dev.redlock.Redlock;
import dev.redlock.Semaphore;
import dev.redlock.config.RedlockConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Predicate;
import org.redisson.api.RLock;

/**
 * The scenarios of many threads at once, N=5, reported as operations per second: one key (or a set,
 * a read-write lock, a semaphore) contended by 8 threads, and distinct keys from 1 to 256 threads.
 */
final class ThroughputScenarios {
  static final String CONTENDED = "contended, 8 threads, one key";
  static final String CONTENDED_DEFAULTS =
      "contended, 8 threads, one key, default retryDelay, 2 s wait";
  static final String CONTENDED_PERMITS = "contended, 8 threads, a semaphore of 2 permits";

  private final LoadDriver.Length length;
  private final Report report;

  ThroughputScenarios(LoadDriver.Length length, Report report) {
    this.length = length;
    this.report = report;
  }

  /** Long enough at 20 hand-offs a second for a p99 of a few hundred. */
  long handOffMillis() {
    return switch (length) {
      case FULL -> 30_000;
      case QUICK -> 10_000;
      case SMOKE -> 500;
    };
  }

  /** How long each contended row runs. */
  private long contendedMillis() {
    return switch (length) {
      case FULL -> 10_000;
      case QUICK -> 3000;
      case SMOKE -> 500;
    };
  }

  /**
   * How long each contended row runs before it is measured: its waiting lines, notices and parking
   * are code no uncontended row runs, and a row measured while the JIT still compiles them measures
   * the compiler (in a 6 s loop, C2 took 2.7 s of CPU; it settles after about 8 s).
   */
  private long contendedWarmUpMillis() {
    return switch (length) {
      case FULL -> 5000;
      case QUICK -> 2000;
      case SMOKE -> 100;
    };
  }

  /** How many cycles {@link #commandsAlone} averages over. */
  private int aloneCycles() {
    return switch (length) {
      case FULL, QUICK -> 500;
      case SMOKE -> 20;
    };
  }

  /**
   * Retrying after 2 ms + up to 3 ms: the default pause (200 ms + up to 100 ms) is longer than the
   * contended rows' 50 ms waits.
   */
  private static RedlockConfig shortRetryPause(List<String> uris) {
    return RedlockConfig.builder()
        .nodes(uris)
        .retryDelay(Duration.ofMillis(2))
        .retryJitter(Duration.ofMillis(3))
        .build();
  }

  /**
   * 8 threads, one key, N=5: critical sections per second, node commands per critical section, and
   * how waiting went: the commands a critical section costs with nobody waiting (measured alone on
   * the same key first), so the rest is what waiting cost, the critical sections of the busiest and
   * idlest thread, each client's share, and the waits that ran out.
   */
  void contended(List<String> uris) throws Exception {
    long millis = contendedMillis();
    int alone = aloneCycles();
    // Ours: 8 threads over 2 Redlock instances, acquire with a 50 ms wait.
    RedlockConfig config = shortRetryPause(uris);
    oneKey(uris, config, CONTENDED, "bench:contended", Duration.ofMillis(50));
    // Ours with the default retryDelay (200 ms + up to 100 ms of jitter), as most users run it:
    // what each of the two clients gets when the other's threads could hand the lock among
    // themselves (the share of the even threads is client a's).
    oneKey(
        uris,
        RedlockConfig.builder().nodes(uris).build(),
        CONTENDED_DEFAULTS,
        "bench:contended-defaults",
        Duration.ofSeconds(2));
    // Ours, sets: 8 threads over 2 instances, each taking two of three resources (overlapping).
    try (Redlock a = Redlock.create(config);
        Redlock b = Redlock.create(config)) {
      List<Set<String>> sets =
          List.of(
              Set.of("bench:sets:0", "bench:sets:1"),
              Set.of("bench:sets:1", "bench:sets:2"),
              Set.of("bench:sets:2", "bench:sets:0"));
      double aloneCommands =
          commandsAlone(
              uris,
              alone,
              () ->
                  a.acquireAll(sets.get(0), Duration.ofSeconds(1), Duration.ofMillis(50))
                      .release());
      contendedRow(
          uris,
          "contended, 8 threads, sets of two of three keys",
          millis,
          "redlock, sets of two of three resources",
          aloneCommands,
          thread ->
              section(
                  () ->
                      (thread % 2 == 0 ? a : b)
                          .acquireAll(
                              sets.get(thread % 3), Duration.ofSeconds(1), Duration.ofMillis(50))));
    }
    // Ours, a read-write lock: 8 threads over 2 instances, each cycle a writer one time in eight
    // (thread 0's every other cycle, say), else a reader; readers share, so most cycles overlap.
    try (Redlock a = Redlock.create(config);
        Redlock b = Redlock.create(config)) {
      ReadWriteLock rwA = a.readWriteLock("bench:rw");
      ReadWriteLock rwB = b.readWriteLock("bench:rw");
      double aloneCommands =
          commandsAlone(
              uris,
              alone,
              () -> rwA.readLock().acquire(Duration.ofSeconds(1), Duration.ofMillis(50)).release());
      AtomicLongArray cycles = new AtomicLongArray(8);
      contendedRow(
          uris,
          "contended, 8 threads, one read-write lock, 1 in 8 cycles a writer",
          millis,
          "redlock, read-write lock (mostly readers)",
          aloneCommands,
          thread -> {
            ReadWriteLock rw = thread % 2 == 0 ? rwA : rwB;
            boolean writes = cycles.incrementAndGet(thread) % 8 == 0;
            return section(
                () ->
                    (writes ? rw.writeLock() : rw.readLock())
                        .acquire(Duration.ofSeconds(1), Duration.ofMillis(50)));
          });
    }
    // Redisson: 8 threads, tryLock with a 50 ms wait and a 1 s lease.
    RedissonRedLockUnderTest redisson = new RedissonRedLockUnderTest(uris);
    try {
      double aloneCommands =
          commandsAlone(
              uris,
              alone,
              () -> {
                RLock lock = redisson.lock("bench:contended-redisson");
                if (lock.tryLock(50, 1000, TimeUnit.MILLISECONDS)) {
                  lock.unlock();
                }
              });
      contendedRow(
          uris,
          CONTENDED,
          millis,
          "Redisson 3.52 RedissonRedLock",
          aloneCommands,
          thread -> {
            RLock lock = redisson.lock("bench:contended-redisson");
            if (lock.tryLock(50, 1000, TimeUnit.MILLISECONDS)) {
              lock.unlock();
              return 1;
            }
            return -1;
          });
    } finally {
      redisson.close();
    }
    System.out.println("contended done");
  }

  /**
   * A contended row of this library on one key: 8 threads over two clients of {@code config},
   * threads 0, 2, 4, 6 on client a, the others on b, each acquire waiting at most {@code maxWait}.
   */
  private void oneKey(
      List<String> uris, RedlockConfig config, String scenario, String resource, Duration maxWait)
      throws Exception {
    try (Redlock a = Redlock.create(config);
        Redlock b = Redlock.create(config)) {
      double aloneCommands =
          commandsAlone(
              uris,
              aloneCycles(),
              () -> a.acquire(resource, Duration.ofSeconds(1), maxWait).release());
      contendedRow(
          uris,
          scenario,
          contendedMillis(),
          "redlock (this library)",
          aloneCommands,
          thread ->
              section(
                  () ->
                      (thread % 2 == 0 ? a : b).acquire(resource, Duration.ofSeconds(1), maxWait)));
    }
  }

  /** A contended row's step: 1 for a critical section, -1 for a wait that ran out. */
  private static int section(Callable<Lease> acquire) throws Exception {
    try (Lease lease = acquire.call()) {
      return lease.isValid() ? 1 : 0;
    } catch (LockUnavailableException e) {
      return -1;
    }
  }

  /**
   * Issue 17 item 2's contended row, N=5: 8 threads over 2 instances sharing a semaphore of 2
   * permits, each acquire waiting at most 50 ms.
   */
  void semaphore(List<String> uris) throws Exception {
    RedlockConfig config = shortRetryPause(uris);
    try (Redlock a = Redlock.create(config);
        Redlock b = Redlock.create(config)) {
      Semaphore ofA = a.semaphore("bench:permits", 2);
      Semaphore ofB = b.semaphore("bench:permits", 2);
      double aloneCommands =
          commandsAlone(
              uris,
              aloneCycles(),
              () -> ofA.acquire(Duration.ofSeconds(1), Duration.ofMillis(50)).release());
      contendedRow(
          uris,
          CONTENDED_PERMITS,
          contendedMillis(),
          "redlock, a semaphore of 2 permits",
          aloneCommands,
          thread ->
              section(
                  () ->
                      (thread % 2 == 0 ? ofA : ofB)
                          .acquire(Duration.ofSeconds(1), Duration.ofMillis(50))));
    }
    System.out.println("semaphore done");
  }

  /**
   * A critical section with nobody waiting: node commands per cycle, one thread, {@code n} times.
   */
  private static double commandsAlone(List<String> uris, int n, Cycle cycle) throws Exception {
    cycle.run(); // the first one connects
    long before = Usage.nodeCommands(uris);
    for (int i = 0; i < n; i++) {
      cycle.run();
    }
    return (Usage.nodeCommands(uris) - before) / (double) n;
  }

  /**
   * One contended row: {@code step} returns 1 for a critical section, -1 for a wait that ran out.
   */
  private void contendedRow(
      List<String> uris, String scenario, long millis, String impl, double aloneCommands, Step step)
      throws Exception {
    int threads = 8;
    runThreads(threads, contendedWarmUpMillis(), step); // the same threads and keys, not counted
    long[] sections = new long[threads]; // each slot written by its own thread only
    long[] timedOut = new long[threads];
    long commandsBefore = Usage.nodeCommands(uris);
    long callsBefore = Usage.scriptCalls(uris);
    Usage.Cpu before = Usage.Cpu.read(uris);
    runThreads(
        threads,
        millis,
        thread -> {
          long r = step.run(thread);
          if (r > 0) {
            sections[thread]++;
          } else if (r < 0) {
            timedOut[thread]++;
          }
          return 0;
        });
    long total = Arrays.stream(sections).sum();
    long evenThreads = 0;
    for (int t = 0; t < threads; t += 2) {
      evenThreads += sections[t];
    }
    double perSection = (Usage.nodeCommands(uris) - commandsBefore) / (double) Math.max(1, total);
    String waiting =
        String.format(
            Locale.ROOT,
            "alone %.1f commands, so waiting %.1f; per thread %,d–%,d; even threads %.0f%%; %,d waits ran out",
            aloneCommands,
            perSection - aloneCommands,
            Arrays.stream(sections).min().orElse(0),
            Arrays.stream(sections).max().orElse(0),
            100.0 * evenThreads / Math.max(1, total),
            Arrays.stream(timedOut).sum());
    report.throughput(
        scenario,
        5,
        impl,
        total * 1000.0 / millis,
        perSection,
        (Usage.scriptCalls(uris) - callsBefore) / (double) Math.max(1, total),
        Usage.Cpu.read(uris).minus(before).percentOf(millis),
        waiting);
  }

  /** One acquire + release, with nobody else waiting. */
  @FunctionalInterface
  private interface Cycle {
    void run() throws Exception;
  }

  /**
   * 1, 8, 64 and 256 threads on distinct keys, N=5: throughput as threads grow against a floor
   * ({@link RawFloors.SharedConnections}: our scripts from as many threads over as many connections
   * per node as the library opens), failures, and the CPU the nodes and this process used
   * meanwhile, so the bound is visible.
   */
  void manyKeys(List<String> uris) throws Exception {
    long millis =
        switch (length) {
          case FULL -> 8000;
          case QUICK -> 3000;
          case SMOKE -> 500;
        };
    try (Redlock redlock = Redlock.create(RedlockConfig.builder().nodes(uris).build());
        RawFloors.SharedConnections floor =
            new RawFloors.SharedConnections(
                RawFloors.hosts(uris), RedlockConfig.DEFAULT_MAX_CONNECTIONS_PER_NODE)) {
      for (int threads : new int[] {1, 8, 64, 256}) {
        distinctKeys(
            uris,
            threads,
            millis,
            floor.name(),
            key -> {
              floor.cycle(key);
              return true;
            });
        distinctKeys(
            uris,
            threads,
            millis,
            "redlock (this library)",
            key -> {
              try {
                redlock.tryAcquire(key, Duration.ofSeconds(30)).orElseThrow().release();
                return true;
              } catch (LockUnavailableException e) {
                return false;
              }
            });
      }
    }
  }

  /** One distinct-keys row: {@code cycle} takes and gives back a new key, false if not won. */
  private void distinctKeys(
      List<String> uris, int threads, long millis, String impl, Predicate<String> cycle)
      throws Exception {
    AtomicLong next = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    Usage.Cpu before = Usage.Cpu.read(uris);
    long ops =
        runThreads(
            threads,
            millis,
            thread -> {
              if (cycle.test("bench:many:" + thread + ":" + next.incrementAndGet())) {
                return 1;
              }
              failed.incrementAndGet();
              return 0;
            });
    Usage.Cpu used = Usage.Cpu.read(uris).minus(before);
    report.throughput(
        "distinct keys, " + threads + " threads",
        5,
        impl,
        ops * 1000.0 / millis,
        Double.NaN,
        Double.NaN,
        used.percentOf(millis),
        failed.get() + " failed");
    System.out.println(
        "many keys, " + threads + " threads, " + impl + ": " + ops + " ok, " + failed + " failed");
  }

  /** One thread's turn in {@link #runThreads}: returns what it counts as done. */
  @FunctionalInterface
  interface Step {
    int run(int thread) throws Exception;
  }

  /** Runs {@code step} over and over on {@code threads} threads for {@code millis}; sums them. */
  static long runThreads(int threads, long millis, Step step) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    try {
      List<Future<Long>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        results.add(
            pool.submit(
                () -> {
                  long done = 0;
                  while (System.nanoTime() < deadline) {
                    done += step.run(thread);
                  }
                  return done;
                }));
      }
      long total = 0;
      for (Future<Long> f : results) {
        total += f.get();
      }
      return total;
    } finally {
      pool.shutdownNow();
    }
  }
}
