package dev.redlock.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.RedisFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Renewals never wait in line (issue 13, item 3): 2,000 kept-alive leases of 2 s survive three of
 * five nodes answering 20 ms late, on a bounded number of library threads. A 200 ms node timeout,
 * as a deployment across racks would use (the 50 ms default leaves a loaded 2-core CI machine too
 * little room: a renewal that fails loses its lease at once, by design).
 */
@Tag("full") // A scale run: the full tier.
class RenewalAtScaleIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  static final int LEASES = 2_000;
  static final Duration TTL = Duration.ofSeconds(2);

  static long libraryThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("redlock-"))
        .count();
  }

  /**
   * With the default connections per node, and with one: then every renewal batch (up to 512)
   * shares one connection with the acquisitions, past the 256 requests a connection takes in flight
   * before it refuses new ones (a batch may pass it by its own size).
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0} connection(s) per node")
  @org.junit.jupiter.params.provider.ValueSource(
      ints = {RedlockConfig.DEFAULT_MAX_CONNECTIONS_PER_NODE, 1})
  void twoThousandLeasesSurviveAQuorumOfSlowNodes(int connections) throws Exception {
    try (FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(5));
        Redlock redlock =
            Redlock.create(
                RedlockConfig.builder()
                    .nodes(nodes.uris())
                    .nodeTimeout(Duration.ofMillis(200))
                    .maxConnectionsPerNode(connections)
                    .build())) {
      AtomicInteger lost = new AtomicInteger();
      List<Lease> leases = new ArrayList<>();
      for (int i = 0; i < LEASES; i++) {
        Lease lease = redlock.acquire("scale:" + i, TTL, Duration.ofSeconds(5)).keepAlive();
        lease.onLost(loss -> lost.incrementAndGet());
        leases.add(lease);
      }
      for (int i = 0; i < 3; i++) {
        nodes.latency(i, Duration.ofMillis(20));
      }
      long atStart = libraryThreads();
      long peakThreads = atStart;
      // Three ttls: every lease renews several times on the slow quorum.
      long until = System.nanoTime() + TTL.multipliedBy(3).toNanos();
      while (System.nanoTime() < until) {
        assertEquals(0, lost.get(), "leases lost while the nodes answered, only late");
        peakThreads = Math.max(peakThreads, libraryThreads());
        java.util.concurrent.locks.LockSupport.parkNanos(50_000_000);
      }
      assertEquals(0, lost.get());
      assertTrue(leases.stream().allMatch(Lease::isValid));
      // Renewals add no threads however many leases renew (one pipeline per node at most), and the
      // whole library stays within its I/O bound plus its timers.
      assertTrue(
          peakThreads - atStart <= 5, atStart + " threads before, " + peakThreads + " after");
      // Per node: one pipeline, and a drain per shared connection at most; plus the timers.
      assertTrue(
          peakThreads <= 5L * (1 + RedlockConfig.DEFAULT_MAX_CONNECTIONS_PER_NODE) + 4,
          "library threads: " + peakThreads);
      System.out.println("library threads: " + atStart + " at the start, peak " + peakThreads);
      nodes.heal();
      leases.forEach(Lease::release);
      assertEquals(0, lost.get(), "a released lease is never lost");
    }
  }
}
