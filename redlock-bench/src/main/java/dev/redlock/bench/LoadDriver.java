package dev.redlock.bench;

import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisNodes;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
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
    againstPlainLock(SET_OF_TWO, uris.subList(0, 5), List.of(Ours.SetOfTwo::new));
    againstPlainLock(
        READ_WRITE,
        uris.subList(0, 5),
        List.of(u -> new Ours.ReadWriteSide(u, false), u -> new Ours.ReadWriteSide(u, true)));
    slowNode(uris);
    ThroughputScenarios throughput = new ThroughputScenarios(length, report);
    throughput.contended(uris.subList(0, 5));
    HandOff.measure(uris.subList(0, 5), throughput.handOffMillis(), report);
    throughput.manyKeys(uris.subList(0, 5));
    // The semaphore's rows last, uncontended then contended: the tables' row order is the run's.
    againstPlainLock(PERMIT, uris.subList(0, 5), List.of(Ours.Permit::new));
    throughput.semaphore(uris.subList(0, 5));
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
   * Issue 17's rows, N=5, the same resources every cycle: {@code variants} of this library (each
   * made from the nodes' URIs) against its plain lock and the floor with our scripts.
   */
  private void againstPlainLock(
      String scenario, List<String> uris, List<Function<List<String>, LockUnderTest>> variants)
      throws Exception {
    List<LockUnderTest> impls = new ArrayList<>();
    impls.add(new RawFloors.PipelinedWithOurScripts(RawFloors.hosts(uris)));
    impls.add(new Ours(uris));
    for (Function<List<String>, LockUnderTest> variant : variants) {
      impls.add(variant.apply(uris));
    }
    measureInterleaved(scenario, uris, impls, true);
  }

  /** A set of two resources taken and given back as one. */
  static final String SET_OF_TWO = "uncontended, same resources, one or a set of two";

  /** A read-write lock's read side and write side taken and given back. */
  static final String READ_WRITE = "uncontended, same lock, plain or read-write";

  /**
   * A permit of a semaphore of 2 taken and given back (issue 17 item 2); {@link
   * ThroughputScenarios#semaphore} has its contended row.
   */
  static final String PERMIT = "uncontended, same resource, one lock or a semaphore's permit";

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
    List<HostAndPort> hosts = RawFloors.hosts(uris);
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
        cpuReaders.add(new Jedis(RawFloors.host(uri)));
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
          double nodeCpuBefore = Usage.nodeCpuSeconds(cpuReaders);
          double clientCpuBefore = Usage.Cpu.processSeconds();
          if (impl instanceof NodeRedlockUnderTest node) { // times its own cycles, in its process
            long[] nanos = node.batch(sameKey(n, which), cycles);
            for (int i = 0; round > 0 && i < nanos.length; i++) {
              h.recordValue(nanos[i]);
            }
            if (round > 0) { // its client is another process: the nodes' side only
              addCpu(
                  cpu,
                  impl.name(),
                  Usage.nodeCpuSeconds(cpuReaders) - nodeCpuBefore,
                  Double.NaN,
                  batch);
            }
            continue;
          }
          long bytesBefore = Usage.allocatedBytes();
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
            a[0] += Usage.allocatedBytes() - bytesBefore;
            a[1] += batch;
            addCpu(
                cpu,
                impl.name(),
                Usage.nodeCpuSeconds(cpuReaders) - nodeCpuBefore,
                Usage.Cpu.processSeconds() - clientCpuBefore,
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
          double nodeCpuBefore = Usage.nodeCpuSeconds(cpuReaders);
          for (long nanos : node.batch(sameKey(n, which), rounds * batch)) {
            h.recordValue(nanos);
          }
          addCpu(
              cpu,
              name,
              Usage.nodeCpuSeconds(cpuReaders) - nodeCpuBefore,
              Double.NaN,
              rounds * batch);
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
    HostAndPort fifth = RawFloors.host(nodes.get(4));
    try (NioReactor reactor = new NioReactor();
        TcpCrusher proxy =
            TcpCrusherBuilder.builder()
                .withReactor(reactor)
                .withBindAddress("127.0.0.1", freePort())
                .withConnectAddress(fifth.getHost(), fifth.getPort())
                .withIncomingThrottlerFactory(
                    address -> new DelayThrottler(20, TimeUnit.MILLISECONDS))
                .buildAndOpen()) {
      List<String> uris = new ArrayList<>(nodes.subList(0, 4));
      uris.add("redis://127.0.0.1:" + proxy.getBindAddress().getPort());
      List<LockUnderTest> impls =
          List.of(
              new RawFloors.Pipelined(RawFloors.hosts(uris)),
              new Ours(uris),
              new RedissonRedLockUnderTest(uris));
      measureInterleavedSmall(
          "one node +20 ms", 5, impls, quick ? 1 : 4, length == Length.SMOKE ? 5 : 25);
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

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
