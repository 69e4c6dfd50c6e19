package dev.redlock.bench;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.Semaphore;
import dev.redlock.testkit.CommandStats;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisNodes;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.netcrusher.core.reactor.NioReactor;
import org.netcrusher.core.throttle.DelayThrottler;
import org.netcrusher.tcp.TcpCrusher;
import org.netcrusher.tcp.TcpCrusherBuilder;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * The load driver: starts 5 local redis-server nodes and measures, in one run and interleaved, this
 * library, the raw network floor and Redisson's RedLock. Prints one table and writes it, with a
 * chart, to the output directory.
 *
 * <pre>
 * ./mvnw -q install -DskipTests &amp;&amp; java -jar redlock-bench/target/redlock-bench.jar [--quick] [--out docs]
 * </pre>
 */
public final class LoadDriver {
  /** How long to measure: the full run, a quick look, or a smoke test that only proves it works. */
  enum Length {
    FULL,
    QUICK,
    SMOKE
  }

  private final Length length;
  private final boolean quick;
  private final Path out;
  private final List<String> givenNodes;

  /** Where node-redlock and ioredis are installed ({@code --node-redlock}); null: no such row. */
  private Path nodeRedlock;

  private final Report report = new Report();

  LoadDriver(Length length, Path out) {
    this(length, out, List.of());
  }

  /**
   * With {@code givenNodes} (five or more redis:// URIs) the driver uses them instead of starting
   * its own.
   */
  LoadDriver(Length length, Path out, List<String> givenNodes) {
    this.length = length;
    this.quick = length != Length.FULL;
    this.out = out;
    this.givenNodes = givenNodes;
  }

  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty(
        "org.slf4j.simpleLogger.log.org.netcrusher", "off"); // logs every proxied close as an error
    System.setProperty("java.awt.headless", "true");
    Length length = Length.FULL;
    Path out = Path.of("docs");
    List<String> nodes = List.of();
    Path nodeRedlock = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick" -> length = Length.QUICK;
        case "--smoke" -> length = Length.SMOKE;
        case "--out" -> out = Path.of(args[++i]);
        case "--nodes" -> nodes = List.of(args[++i].split("\\s*,\\s*"));
        case "--node-redlock" -> nodeRedlock = Path.of(args[++i]);
        default -> {
          System.err.println(
              "usage: LoadDriver [--quick | --smoke] [--out DIR] [--nodes redis://h1:p1,...,redis://h5:p5]"
                  + " [--node-redlock DIR (holding node_modules with redlock@5.0.0-beta.2 and"
                  + " ioredis@5)]");
          System.exit(2);
        }
      }
    }
    if (!nodes.isEmpty() && nodes.size() < 5) {
      System.err.println(
          "--nodes needs at least five redis:// URIs (plain, no credentials), was " + nodes.size());
      System.exit(2);
    }
    LoadDriver driver = new LoadDriver(length, out, nodes);
    driver.nodeRedlock = nodeRedlock;
    driver.run();
  }

  void run() throws Exception {
    if (!givenNodes.isEmpty()) {
      // Nodes we did not start: we do not vouch for their data, so fresh nodes may first sit out
      // the restart guard's quarantine (maxTtl); the warm-up round absorbs part of it.
      measure(givenNodes, "given nodes");
      return;
    }
    try (RedisNodes nodes = RedisNodes.start(5)) {
      NodeData.vouchForNewNodes(nodes);
      measure(nodes.uris(), "redis " + nodes.node(0).binary().version());
    }
  }

  private void measure(List<String> uris, String nodesDescription) throws Exception {
    String machine =
        Runtime.getRuntime().availableProcessors()
            + " cores, Java "
            + System.getProperty("java.version")
            + ", "
            + nodesDescription;
    System.out.println(
        "redlock-bench on "
            + machine
            + (quick ? " (" + length.name().toLowerCase(Locale.ROOT) + ")" : ""));
    // The headline: one job taking its own lock again and again. Then a new resource every time.
    for (int n : new int[] {1, 3, 5}) {
      uncontended(uris.subList(0, n), n, SAME_RESOURCE, true);
    }
    for (int n : new int[] {1, 3, 5}) {
      uncontended(uris.subList(0, n), n, NEW_RESOURCE, false);
    }
    setOfTwo(uris.subList(0, 5));
    readWrite(uris.subList(0, 5));
    slowNode(uris);
    contended(uris.subList(0, 5));
    HandOff.measure(uris.subList(0, 5), handOffMillis(), report);
    manyKeys(uris.subList(0, 5));
    semaphore(uris.subList(0, 5));
    Files.createDirectories(out);
    String table = report.markdown(machine);
    System.out.println(table);
    Files.writeString(out.resolve("performance-results.md"), table);
    Chart.latencyByNodes(report, out.resolve("performance-latency.png"));
    System.out.println(
        "wrote "
            + out.resolve("performance-results.md")
            + " and "
            + out.resolve("performance-latency.png"));
  }

  /**
   * A set of two resources taken and given back as one (issue 17), against one resource and the
   * floor with our scripts, N=5, the same resources every cycle.
   */
  private void setOfTwo(List<String> uris) throws Exception {
    List<HostAndPort> hosts =
        uris.stream().map(u -> HostAndPort.from(u.substring("redis://".length()))).toList();
    List<LockUnderTest> impls = new ArrayList<>();
    impls.add(new RawFloors.PipelinedWithOurScripts(hosts));
    impls.add(new Ours(uris));
    impls.add(new Ours.SetOfTwo(uris));
    measureInterleaved(SET_OF_TWO, uris, impls, true);
  }

  static final String SET_OF_TWO = "uncontended, same resources, one or a set of two";

  /**
   * A read-write lock's read side and write side taken and given back (issue 17), against a plain
   * lock and the floor with our scripts, N=5, the same lock every cycle.
   */
  private void readWrite(List<String> uris) throws Exception {
    List<HostAndPort> hosts =
        uris.stream().map(u -> HostAndPort.from(u.substring("redis://".length()))).toList();
    List<LockUnderTest> impls = new ArrayList<>();
    impls.add(new RawFloors.PipelinedWithOurScripts(hosts));
    impls.add(new Ours(uris));
    impls.add(new Ours.ReadWriteSide(uris, false));
    impls.add(new Ours.ReadWriteSide(uris, true));
    measureInterleaved(READ_WRITE, uris, impls, true);
  }

  static final String READ_WRITE = "uncontended, same lock, plain or read-write";

  /** The uncontended scenarios' names, as the report and the chart print them. */
  static final String SAME_RESOURCE = "uncontended, same resource";

  static final String NEW_RESOURCE = "uncontended, new resource";

  /**
   * One thread, acquire + release of an uncontended lock; implementations interleaved round by
   * round. {@code sameResource}: every cycle of an implementation takes the same resource (each
   * implementation its own), as a job re-taking its ledger's lock does; else a new one each time.
   */
  private void uncontended(List<String> uris, int n, String scenario, boolean sameResource)
      throws Exception {
    List<HostAndPort> hosts =
        uris.stream().map(u -> HostAndPort.from(u.substring("redis://".length()))).toList();
    List<LockUnderTest> impls = new ArrayList<>();
    impls.add(new RawFloors.Sequential(hosts));
    if (n > 1) {
      impls.add(new RawFloors.Pipelined(hosts));
      impls.add(new RawFloors.ExecutorFanOut(hosts));
    }
    impls.add(new RawFloors.Pipelined(hosts, true));
    impls.add(new RawFloors.PipelinedWithOurScripts(hosts));
    impls.add(new Ours(uris));
    impls.add(new RedissonRedLockUnderTest(uris));
    if (nodeRedlock != null && sameResource && n != 3) {
      impls.add(new NodeRedlockUnderTest(nodeRedlock, uris));
    }
    measureInterleaved(scenario, uris, impls, sameResource);
  }

  private void measureInterleaved(
      String scenario, List<String> uris, List<LockUnderTest> impls, boolean sameResource)
      throws Exception {
    int n = uris.size();
    // Small batches, many rounds: a burst of noise on this shared machine (another process, a
    // collection) then lands on every implementation's samples alike, not on one batch's tail.
    int rounds =
        switch (length) {
          case FULL -> 80;
          case QUICK -> 24;
          case SMOKE -> 1;
        };
    int batch =
        switch (length) {
          case FULL -> 125;
          case QUICK -> 50;
          case SMOKE -> 20;
        };
    Map<String, Histogram> histograms = new LinkedHashMap<>();
    Map<String, long[]> allocation = new LinkedHashMap<>(); // bytes, cycles
    Map<String, double[]> cpu = new LinkedHashMap<>(); // node seconds, client seconds, cycles
    // The nodes' CPU is read over connections kept open through the scenario, between batches:
    // each read costs every node one INFO, the same for every implementation.
    List<Jedis> cpuReaders = new ArrayList<>();
    try {
      for (String uri : uris) {
        cpuReaders.add(new Jedis(HostAndPort.from(uri.substring("redis://".length()))));
      }
      for (int round = 0; round <= rounds; round++) { // round 0 warms up and is discarded
        // The warm-up round is longer: the first scenario of a run would otherwise be measured
        // while the JIT is still compiling (and escape analysis not yet removing allocations).
        int cycles = round == 0 ? batch * warmUpBatches() : batch;
        for (int which = 0; which < impls.size(); which++) {
          LockUnderTest impl = impls.get(which);
          Histogram h =
              histograms.computeIfAbsent(
                  impl.name(), k -> new Histogram(TimeUnit.SECONDS.toNanos(10), 3));
          if (round == 0) {
            warmUpOnce(impl, n, which, sameResource);
          }
          double nodeCpuBefore = nodeCpuSeconds(cpuReaders);
          double clientCpuBefore = Cpu.processSeconds();
          if (impl instanceof NodeRedlockUnderTest node) { // times its own cycles, in its process
            long[] nanos = node.batch(sameKey(n, which), cycles);
            for (int i = 0; round > 0 && i < nanos.length; i++) {
              h.recordValue(nanos[i]);
            }
            if (round > 0) { // its client is another process: the nodes' side only
              addCpu(
                  cpu, impl.name(), nodeCpuSeconds(cpuReaders) - nodeCpuBefore, Double.NaN, batch);
            }
            continue;
          }
          long bytesBefore = allocatedBytes();
          for (int i = 0; i < cycles; i++) {
            String key =
                sameResource ? sameKey(n, which) : "bench:new:" + n + ":" + round + ":" + i;
            long start = System.nanoTime();
            impl.cycle(key);
            if (round > 0) {
              h.recordValue(System.nanoTime() - start);
            }
          }
          if (round > 0) {
            long[] a = allocation.computeIfAbsent(impl.name(), k -> new long[2]);
            a[0] += allocatedBytes() - bytesBefore;
            a[1] += batch;
            addCpu(
                cpu,
                impl.name(),
                nodeCpuSeconds(cpuReaders) - nodeCpuBefore,
                Cpu.processSeconds() - clientCpuBefore,
                batch);
          }
        }
      }
      // node-redlock once more in a steady loop of its own, as `node bench.js` runs it: right
      // after the rounds, on the same nodes, the same number of cycles back to back in its warm
      // process, each timed there, while this process only waits for the answer.
      for (int which = 0; which < impls.size(); which++) {
        if (impls.get(which) instanceof NodeRedlockUnderTest node) {
          String name = node.name() + ", own loop";
          Histogram h = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
          histograms.put(name, h);
          double nodeCpuBefore = nodeCpuSeconds(cpuReaders);
          for (long nanos : node.batch(sameKey(n, which), rounds * batch)) {
            h.recordValue(nanos);
          }
          addCpu(cpu, name, nodeCpuSeconds(cpuReaders) - nodeCpuBefore, Double.NaN, rounds * batch);
        }
      }
    } finally {
      cpuReaders.forEach(Jedis::close);
      impls.forEach(LockUnderTest::close);
    }
    histograms.forEach(
        (name, h) -> {
          double[] c = cpu.getOrDefault(name, new double[] {Double.NaN, Double.NaN, 1});
          report.latency(
              scenario,
              n,
              name,
              h,
              allocation.containsKey(name)
                  ? allocation.get(name)[0] / (double) allocation.get(name)[1]
                  : Double.NaN,
              c[0] * 1e6 / c[2],
              c[1] * 1e6 / c[2]);
        });
    System.out.printf(Locale.ROOT, "%s N=%d done%n", scenario, n);
  }

  /** Adds one batch's CPU to an implementation's totals: node seconds, client seconds, cycles. */
  private static void addCpu(
      Map<String, double[]> cpu,
      String impl,
      double nodeSeconds,
      double clientSeconds,
      int cycles) {
    double[] c = cpu.computeIfAbsent(impl, k -> new double[3]);
    c[0] += nodeSeconds;
    c[1] += clientSeconds;
    c[2] += cycles;
  }

  private static double nodeCpuSeconds(List<Jedis> nodes) {
    double seconds = 0;
    for (Jedis node : nodes) {
      seconds += Cpu.cpuSeconds(node);
    }
    return seconds;
  }

  /** The key implementation {@code which} takes again and again in a same-resource scenario. */
  private static String sameKey(int n, int which) {
    return "bench:same:" + n + ":" + which;
  }

  private int warmUpBatches() {
    return length == Length.SMOKE ? 1 : 40;
  }

  /**
   * How long the run warms each implementation up the first time it meets it, before anything is
   * measured: until it has made {@link #FIRST_WARM_UP_CYCLES} cycles, or for {@link
   * #FIRST_WARM_UP_NANOS}, whichever comes first. HotSpot compiles a method with its optimizing
   * compiler only after about 10,000 calls; before that the cycle runs profiled, less optimized
   * code, and the compiler threads take CPU from the 2 cores the nodes and the client share. With
   * the run's first 2,000 cycles as the only warm-up, this library's N=1 row measured 1.38× the
   * floor with our scripts, and 1.06× after 20,000 (docs/performance.md): the rows are about the
   * cost of a cycle in a long-running job, so they start once the code is compiled.
   */
  static final int FIRST_WARM_UP_CYCLES = 20_000;

  static final long FIRST_WARM_UP_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** The implementations already warmed up in this run, by name. */
  private final Set<String> warmedUp = new HashSet<>();

  /** The first warm-up of {@code impl} in this run (see {@link #FIRST_WARM_UP_CYCLES}). */
  private void warmUpOnce(LockUnderTest impl, int n, int which, boolean sameResource)
      throws Exception {
    if (length == Length.SMOKE || !warmedUp.add(impl.name())) {
      return;
    }
    long until = System.nanoTime() + FIRST_WARM_UP_NANOS;
    int done = 0;
    while (done < FIRST_WARM_UP_CYCLES && System.nanoTime() - until < 0) {
      if (impl instanceof NodeRedlockUnderTest node) {
        node.batch(sameKey(n, which), 500);
        done += 500;
        continue;
      }
      impl.cycle(sameResource ? sameKey(n, which) : "bench:warm:" + n + ":" + done);
      done++;
    }
  }

  /** One of five nodes behind a proxy that adds 20 ms: the quorum should not wait for it. */
  private void slowNode(List<String> nodes) throws Exception {
    HostAndPort fifth = HostAndPort.from(nodes.get(4).substring("redis://".length()));
    try (NioReactor reactor = new NioReactor();
        TcpCrusher proxy =
            TcpCrusherBuilder.builder()
                .withReactor(reactor)
                .withBindAddress(new InetSocketAddress("127.0.0.1", 0).getHostString(), freePort())
                .withConnectAddress(fifth.getHost(), fifth.getPort())
                .withIncomingThrottlerFactory(
                    address -> new DelayThrottler(20, TimeUnit.MILLISECONDS))
                .buildAndOpen()) {
      List<String> uris = new ArrayList<>(nodes.subList(0, 4));
      uris.add("redis://127.0.0.1:" + proxy.getBindAddress().getPort());
      List<HostAndPort> hosts =
          uris.stream().map(u -> HostAndPort.from(u.substring("redis://".length()))).toList();
      List<LockUnderTest> impls =
          List.of(
              new RawFloors.Pipelined(hosts), new Ours(uris), new RedissonRedLockUnderTest(uris));
      boolean wasQuick = quick;
      measureInterleavedSmall(
          "one node +20 ms", 5, impls, wasQuick ? 1 : 4, length == Length.SMOKE ? 5 : 25);
    }
  }

  private void measureInterleavedSmall(
      String scenario, int n, List<LockUnderTest> impls, int rounds, int batch) throws Exception {
    Map<String, Histogram> histograms = new LinkedHashMap<>();
    try {
      for (int round = 0; round <= rounds; round++) {
        for (LockUnderTest impl : impls) {
          Histogram h =
              histograms.computeIfAbsent(
                  impl.name(), k -> new Histogram(TimeUnit.SECONDS.toNanos(10), 3));
          for (int i = 0; i < batch; i++) {
            long start = System.nanoTime();
            impl.cycle("bench:slow:" + round + ":" + i);
            if (round > 0) {
              h.recordValue(System.nanoTime() - start);
            }
          }
        }
      }
    } finally {
      impls.forEach(LockUnderTest::close);
    }
    histograms.forEach((name, h) -> report.latency(scenario, n, name, h, Double.NaN));
    System.out.println(scenario + " done");
  }

  /**
   * 8 threads, one key, N=5: critical sections per second, node commands per critical section, and
   * how waiting went: the commands a critical section costs with nobody waiting (measured alone on
   * the same key first), so the rest is what waiting cost, the critical sections of the busiest and
   * idlest thread, each client's share, and the waits that ran out.
   */
  private void contended(List<String> uris) throws Exception {
    long millis =
        switch (length) {
          case FULL -> 10_000;
          case QUICK -> 3000;
          case SMOKE -> 500;
        };
    int alone =
        switch (length) {
          case FULL, QUICK -> 500;
          case SMOKE -> 20;
        };
    // Ours: 8 threads over 2 Redlock instances, acquire with a 50 ms wait.
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes(uris)
            .retryDelay(Duration.ofMillis(2))
            .retryJitter(Duration.ofMillis(3))
            .build();
    try (Redlock a = Redlock.create(config);
        Redlock b = Redlock.create(config)) {
      double aloneCommands =
          commandsAlone(
              uris,
              alone,
              () ->
                  a.acquire("bench:contended", Duration.ofSeconds(1), Duration.ofMillis(50))
                      .release());
      contendedRow(
          uris,
          CONTENDED,
          millis,
          "redlock (this library)",
          aloneCommands,
          oneKey(a, b, "bench:contended", Duration.ofMillis(50)));
    }
    // Ours with the default retryDelay (200 ms + up to 100 ms of jitter), as most users run it:
    // what each of the two clients gets when the other's threads could hand the lock among
    // themselves (the share of the even threads is client a's).
    RedlockConfig defaults = RedlockConfig.builder().nodes(uris).build();
    try (Redlock a = Redlock.create(defaults);
        Redlock b = Redlock.create(defaults)) {
      double aloneCommands =
          commandsAlone(
              uris,
              alone,
              () ->
                  a.acquire(
                          "bench:contended-defaults", Duration.ofSeconds(1), Duration.ofSeconds(2))
                      .release());
      contendedRow(
          uris,
          CONTENDED_DEFAULTS,
          millis,
          "redlock (this library)",
          aloneCommands,
          oneKey(a, b, "bench:contended-defaults", Duration.ofSeconds(2)));
    }
    // Ours, sets: 8 threads over 2 instances, each taking two of three resources (overlapping).
    try (Redlock a = Redlock.create(config);
        Redlock b = Redlock.create(config)) {
      List<java.util.Set<String>> sets =
          List.of(
              java.util.Set.of("bench:sets:0", "bench:sets:1"),
              java.util.Set.of("bench:sets:1", "bench:sets:2"),
              java.util.Set.of("bench:sets:2", "bench:sets:0"));
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
          thread -> {
            Redlock redlock = thread % 2 == 0 ? a : b;
            try (Lease lease =
                redlock.acquireAll(
                    sets.get(thread % 3), Duration.ofSeconds(1), Duration.ofMillis(50))) {
              return lease.isValid() ? 1 : 0;
            } catch (LockUnavailableException e) {
              return -1;
            }
          });
    }
    // Ours, a read-write lock: 8 threads over 2 instances, each cycle a writer one time in eight
    // (thread 0's every other cycle, say), else a reader; readers share, so most cycles overlap.
    try (Redlock a = Redlock.create(config);
        Redlock b = Redlock.create(config)) {
      dev.redlock.ReadWriteLock rwA = a.readWriteLock("bench:rw");
      dev.redlock.ReadWriteLock rwB = b.readWriteLock("bench:rw");
      double aloneCommands =
          commandsAlone(
              uris,
              alone,
              () -> rwA.readLock().acquire(Duration.ofSeconds(1), Duration.ofMillis(50)).release());
      java.util.concurrent.atomic.AtomicLongArray cycles =
          new java.util.concurrent.atomic.AtomicLongArray(8);
      contendedRow(
          uris,
          "contended, 8 threads, one read-write lock, 1 in 8 cycles a writer",
          millis,
          "redlock, read-write lock (mostly readers)",
          aloneCommands,
          thread -> {
            dev.redlock.ReadWriteLock rw = thread % 2 == 0 ? rwA : rwB;
            boolean writes = cycles.incrementAndGet(thread) % 8 == 0;
            try (Lease lease =
                (writes ? rw.writeLock() : rw.readLock())
                    .acquire(Duration.ofSeconds(1), Duration.ofMillis(50))) {
              return lease.isValid() ? 1 : 0;
            } catch (LockUnavailableException e) {
              return -1;
            }
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
                org.redisson.api.RLock lock = redisson.lock("bench:contended-redisson");
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
            org.redisson.api.RLock lock = redisson.lock("bench:contended-redisson");
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

  /** Long enough at 20 hand-offs a second for a p99 of a few hundred. */
  private long handOffMillis() {
    return switch (length) {
      case FULL -> 30_000;
      case QUICK -> 10_000;
      case SMOKE -> 500;
    };
  }

  static final String CONTENDED = "contended, 8 threads, one key";
  static final String CONTENDED_DEFAULTS =
      "contended, 8 threads, one key, default retryDelay, 2 s wait";

  /** Threads 0, 2, 4, 6 on client {@code a}, the others on {@code b}: 1 a critical section. */
  private static Step oneKey(Redlock a, Redlock b, String resource, Duration maxWait) {
    return thread -> {
      Redlock redlock = thread % 2 == 0 ? a : b;
      try (Lease lease = redlock.acquire(resource, Duration.ofSeconds(1), maxWait)) {
        return lease.isValid() ? 1 : 0;
      } catch (LockUnavailableException e) {
        return -1;
      }
    };
  }

  static final String PERMIT = "uncontended, same resource, one lock or a semaphore's permit";

  static final String CONTENDED_PERMITS = "contended, 8 threads, a semaphore of 2 permits";

  /**
   * Issue 17 item 2's rows, N=5: a permit of a semaphore of 2 taken and given back, against the
   * mutex and the floor with our scripts; then 8 threads over 2 instances sharing a semaphore of 2
   * permits, each acquire waiting at most 50 ms.
   */
  private void semaphore(List<String> uris) throws Exception {
    List<HostAndPort> hosts =
        uris.stream().map(u -> HostAndPort.from(u.substring("redis://".length()))).toList();
    List<LockUnderTest> impls = new ArrayList<>();
    impls.add(new RawFloors.PipelinedWithOurScripts(hosts));
    impls.add(new Ours(uris));
    impls.add(new Ours.Permit(uris));
    measureInterleaved(PERMIT, uris, impls, true);
    long millis =
        switch (length) {
          case FULL -> 10_000;
          case QUICK -> 3000;
          case SMOKE -> 500;
        };
    int alone =
        switch (length) {
          case FULL, QUICK -> 500;
          case SMOKE -> 20;
        };
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes(uris)
            .retryDelay(Duration.ofMillis(2))
            .retryJitter(Duration.ofMillis(3))
            .build();
    try (Redlock a = Redlock.create(config);
        Redlock b = Redlock.create(config)) {
      Semaphore ofA = a.semaphore("bench:permits", 2);
      Semaphore ofB = b.semaphore("bench:permits", 2);
      double aloneCommands =
          commandsAlone(
              uris,
              alone,
              () -> ofA.acquire(Duration.ofSeconds(1), Duration.ofMillis(50)).release());
      contendedRow(
          uris,
          CONTENDED_PERMITS,
          millis,
          "redlock, a semaphore of 2 permits",
          aloneCommands,
          thread -> {
            Semaphore semaphore = thread % 2 == 0 ? ofA : ofB;
            try (Lease permit = semaphore.acquire(Duration.ofSeconds(1), Duration.ofMillis(50))) {
              return permit.isValid() ? 1 : 0;
            } catch (LockUnavailableException e) {
              return -1;
            }
          });
    }
    System.out.println("semaphore done");
  }

  /**
   * A critical section with nobody waiting: node commands per cycle, one thread, {@code n} times.
   */
  private static double commandsAlone(List<String> uris, int n, Cycle cycle) throws Exception {
    cycle.run(); // the first one connects
    long before = nodeCommands(uris);
    for (int i = 0; i < n; i++) {
      cycle.run();
    }
    return (nodeCommands(uris) - before) / (double) n;
  }

  /**
   * One contended row: {@code step} returns 1 for a critical section, -1 for a wait that ran out.
   */
  private void contendedRow(
      List<String> uris, String scenario, long millis, String impl, double aloneCommands, Step step)
      throws Exception {
    int threads = 8;
    long[] sections = new long[threads]; // each slot written by its own thread only
    long[] timedOut = new long[threads];
    long commandsBefore = nodeCommands(uris);
    long callsBefore = scriptCalls(uris);
    Cpu before = Cpu.read(uris);
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
    long total = java.util.Arrays.stream(sections).sum();
    long evenThreads = 0;
    for (int t = 0; t < threads; t += 2) {
      evenThreads += sections[t];
    }
    double perSection = (nodeCommands(uris) - commandsBefore) / (double) Math.max(1, total);
    String waiting =
        String.format(
            Locale.ROOT,
            "alone %.1f commands, so waiting %.1f; per thread %,d–%,d; even threads %.0f%%; %,d waits ran out",
            aloneCommands,
            perSection - aloneCommands,
            java.util.Arrays.stream(sections).min().orElse(0),
            java.util.Arrays.stream(sections).max().orElse(0),
            100.0 * evenThreads / Math.max(1, total),
            java.util.Arrays.stream(timedOut).sum());
    report.throughput(
        scenario,
        5,
        impl,
        total * 1000.0 / millis,
        perSection,
        (scriptCalls(uris) - callsBefore) / (double) Math.max(1, total),
        Cpu.read(uris).minus(before).percentOf(millis),
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
  private void manyKeys(List<String> uris) throws Exception {
    long millis =
        switch (length) {
          case FULL -> 8000;
          case QUICK -> 3000;
          case SMOKE -> 500;
        };
    List<HostAndPort> hosts =
        uris.stream().map(u -> HostAndPort.from(u.substring("redis://".length()))).toList();
    try (Redlock redlock = Redlock.create(RedlockConfig.builder().nodes(uris).build());
        RawFloors.SharedConnections floor =
            new RawFloors.SharedConnections(
                hosts, RedlockConfig.DEFAULT_MAX_CONNECTIONS_PER_NODE)) {
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
      List<String> uris,
      int threads,
      long millis,
      String impl,
      java.util.function.Predicate<String> cycle)
      throws Exception {
    AtomicLong next = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    Cpu before = Cpu.read(uris);
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
    Cpu used = Cpu.read(uris).minus(before);
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

  @FunctionalInterface
  interface Step {
    int run(int thread) throws Exception;
  }

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

  /** CPU seconds used so far by the nodes (INFO cpu, user + sys, summed) and by this process. */
  record Cpu(double nodeSeconds, double clientSeconds) {
    static Cpu read(List<String> uris) {
      double nodes = 0;
      for (String uri : uris) {
        HostAndPort host = HostAndPort.from(uri.substring("redis://".length()));
        try (Jedis jedis = new Jedis(host)) {
          nodes += cpuSeconds(jedis);
        }
      }
      return new Cpu(nodes, processSeconds());
    }

    /** The CPU time one node has used so far: INFO cpu's user + sys, to the microsecond. */
    static double cpuSeconds(Jedis node) {
      double seconds = 0;
      for (String line : node.info("cpu").split("\r?\n")) {
        if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
          seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
        }
      }
      return seconds;
    }

    /** The CPU time this process has used so far, every thread of it (HotSpot, to the ns). */
    static double processSeconds() {
      com.sun.management.OperatingSystemMXBean os =
          (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
      return os.getProcessCpuTime() / 1e9;
    }

    Cpu minus(Cpu earlier) {
      return new Cpu(nodeSeconds - earlier.nodeSeconds, clientSeconds - earlier.clientSeconds);
    }

    /** "nodes 140%, client 55%": percent of one core over {@code millis} of wall time. */
    String percentOf(long millis) {
      double wall = millis / 1000.0;
      return String.format(
          Locale.ROOT,
          "nodes %.0f%%, client %.0f%%",
          100 * nodeSeconds / wall,
          100 * clientSeconds / wall);
    }
  }

  /**
   * Commands the nodes executed so far, not counting INFO itself. Redis counts the commands a
   * script runs too: an acquire on one node is its EVALSHA and the 4 calls inside.
   */
  static long nodeCommands(List<String> uris) {
    return calls(uris, command -> !command.equals("info"));
  }

  /** Scripts the nodes were asked to run (EVALSHA, EVAL): requests, as a client sends them. */
  private static long scriptCalls(List<String> uris) {
    return calls(uris, command -> command.equals("evalsha") || command.equals("eval"));
  }

  private static long calls(List<String> uris, java.util.function.Predicate<String> counted) {
    long total = 0;
    for (String uri : uris) {
      HostAndPort host = HostAndPort.from(uri.substring("redis://".length()));
      total += CommandStats.calls(host.getHost(), host.getPort(), counted);
    }
    return total;
  }

  /** Bytes allocated by every live thread of this JVM so far (HotSpot). */
  private static long allocatedBytes() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long total = 0;
    for (long bytes : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
      if (bytes > 0) {
        total += bytes;
      }
    }
    return total;
  }

  private static int freePort() throws java.io.IOException {
    try (java.net.ServerSocket s =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
