package dev.redlock.bench;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisNodes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Histogram;

/**
 * One lock handed between clients, shaped like published lock benchmarks: 5 clients (one {@link
 * Redlock} and one thread each), N=5, each holding the lock 50 ms. It measures the hand-off gap
 * (from the holder calling release to the next holder's grant) and the node commands per critical
 * section, for a waiter that stands in the library's waiting line and is woken by release notices
 * ({@code acquire}) against one that only polls ({@code tryAcquire}, then a pause of retryDelay
 * plus jitter): what the waiting lines and notices pay for.
 */
final class HandOff {
  static final String SCENARIO = "hand-off, 5 clients, one lock, 50 ms hold";
  private static final long HOLD_MILLIS = 50;
  private static final Duration TTL = Duration.ofSeconds(2);

  private HandOff() {}

  /** These rows alone, on 5 nodes of its own: {@code java -cp redlock-bench.jar ...HandOff [s]}. */
  public static void main(String[] args) throws Exception {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    long millis = args.length > 0 ? Long.parseLong(args[0]) * 1000 : 10_000;
    try (RedisNodes nodes = RedisNodes.start(5)) {
      NodeData.vouchForNewNodes(nodes);
      Report report = new Report();
      measure(nodes.uris(), millis, report);
      System.out.println(report.markdown("this machine, " + millis / 1000 + " s per row"));
    }
  }

  /** The rows, with the default retry pause and a short one, each for {@code millis}. */
  static void measure(List<String> uris, long millis, Report report) throws Exception {
    for (Duration[] pause :
        new Duration[][] {
          {Duration.ofMillis(200), Duration.ofMillis(100)},
          {Duration.ofMillis(2), Duration.ofMillis(3)}
        }) {
      String delays =
          "retryDelay " + pause[0].toMillis() + " ms + up to " + pause[1].toMillis() + " ms";
      RedlockConfig config =
          RedlockConfig.builder().nodes(uris).retryDelay(pause[0]).retryJitter(pause[1]).build();
      row(uris, millis, report, config, "acquire: waiting line + release notices, " + delays, true);
      row(uris, millis, report, config, "tryAcquire, then the pause: polling, " + delays, false);
    }
  }

  private static void row(
      List<String> uris,
      long millis,
      Report report,
      RedlockConfig config,
      String impl,
      boolean waitInLine)
      throws Exception {
    String resource = "bench:handoff:" + System.nanoTime();
    List<Redlock> clients = new ArrayList<>();
    try {
      for (int i = 0; i < 5; i++) {
        clients.add(Redlock.create(config));
      }
      clients.get(0).tryAcquire(resource, TTL).orElseThrow().release(); // connects, warms up
      Histogram gaps = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
      AtomicLong releasedAt = new AtomicLong(); // when the last holder called release; 0: none yet
      AtomicLong sections = new AtomicLong();
      AtomicLong failed = new AtomicLong();
      AtomicLong regrabs = new AtomicLong();
      AtomicInteger lastHolder = new AtomicInteger(-1);
      AtomicLongArray perClient = new AtomicLongArray(5);
      long commandsBefore = Usage.nodeCommands(uris);
      Usage.Cpu before = Usage.Cpu.read(uris);
      ThroughputScenarios.runThreads(
          5,
          millis,
          thread -> {
            Redlock client = clients.get(thread);
            Optional<Lease> taken;
            try {
              taken =
                  waitInLine
                      ? Optional.of(client.acquire(resource, TTL, Duration.ofSeconds(10)))
                      : client.tryAcquire(resource, TTL);
            } catch (LockUnavailableException e) { // too few nodes answered in time: try again
              failed.incrementAndGet();
              taken = Optional.empty();
            }
            if (taken.isEmpty()) {
              long pause =
                  config.retryDelay().toNanos()
                      + ThreadLocalRandom.current().nextLong(config.retryJitter().toNanos() + 1);
              TimeUnit.NANOSECONDS.sleep(pause);
              return 0;
            }
            long granted = System.nanoTime();
            long released = releasedAt.getAndSet(0);
            int previous = lastHolder.getAndSet(thread);
            if (previous == thread) {
              regrabs.incrementAndGet(); // taken back by the client that just released it
            } else if (released != 0) {
              gaps.recordValue(Math.min(granted - released, gaps.getHighestTrackableValue()));
            }
            sections.incrementAndGet();
            perClient.incrementAndGet(thread);
            Thread.sleep(HOLD_MILLIS); // the critical section's work
            releasedAt.set(System.nanoTime());
            taken.get().release();
            return 1;
          });
      long total = Math.max(1, sections.get());
      report.throughput(
          SCENARIO,
          5,
          impl,
          sections.get() * 1000.0 / millis,
          (Usage.nodeCommands(uris) - commandsBefore) / (double) total,
          Double.NaN,
          Usage.Cpu.read(uris).minus(before).percentOf(millis),
          String.format(
              Locale.ROOT,
              "hand-off to another client: gap p50 %.1f ms, p99 %.1f ms (%d hand-offs);"
                  + " taken back by its releaser %d%%; per client %d–%d; %d attempts failed",
              gaps.getValueAtPercentile(50) / 1e6,
              gaps.getValueAtPercentile(99) / 1e6,
              gaps.getTotalCount(),
              100 * regrabs.get() / total,
              min(perClient),
              max(perClient),
              failed.get()));
    } finally {
      for (Redlock client : clients) {
        client.close();
      }
    }
  }

  private static long min(AtomicLongArray counts) {
    long min = Long.MAX_VALUE;
    for (int i = 0; i < counts.length(); i++) {
      min = Math.min(min, counts.get(i));
    }
    return min;
  }

  private static long max(AtomicLongArray counts) {
    long max = 0;
    for (int i = 0; i < counts.length(); i++) {
      max = Math.max(max, counts.get(i));
    }
    return max;
  }
}
