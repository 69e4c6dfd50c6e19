package dev.redlock.micrometer;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNodes;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Meter values after a scripted sequence of lock events, on real nodes. */
class RedlockMetricsIT {
  static final Duration NO_HANG = Duration.ofSeconds(30);

  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  @Test
  void aScriptedSequenceShowsInTheMeters() throws Exception {
    try (RedisNodes nodes = redis.start(RedisFixture.nodes(3))) {
      MeterRegistry registry = new SimpleMeterRegistry();
      RedlockConfig config =
          RedlockConfig.builder()
              .nodes(nodes.uris())
              .nodeTimeout(Duration.ofMillis(100))
              .listener(new RedlockMetrics(registry))
              .build();
      // 0. before any event, every loss reason has its series, at zero, for alerts to read
      assertEquals(
          List.of("expired", "max_hold_reached", "renewal_failed"),
          registry.find("redlock.leases.lost").counters().stream()
              .peek(c -> assertEquals(0.0, c.count()))
              .map(c -> c.getId().getTag("reason"))
              .sorted()
              .toList());
      try (Redlock redlock = Redlock.create(config);
          Redlock other = Redlock.create(RedlockConfig.builder().nodes(nodes.uris()).build())) {
        // 1. two grants, one extended; both held
        Lease a = redlock.acquire("m:a", Duration.ofSeconds(10), NO_HANG);
        Lease b = redlock.acquire("m:b", Duration.ofSeconds(10), NO_HANG);
        assertTrue(a.extend(Duration.ofSeconds(10)));
        assertEquals(2.0, registry.get("redlock.leases.held").gauge().value());
        // 2. one attempt finds the lock held elsewhere
        Lease elsewhere = other.acquire("m:c", Duration.ofSeconds(10), NO_HANG);
        assertTrue(redlock.tryAcquire("m:c", Duration.ofSeconds(10)).isEmpty());
        elsewhere.release();
        // 3. releases
        a.release();
        b.release();
        assertEquals(0.0, registry.get("redlock.leases.held").gauge().value());
        // 4. a majority down: one failed attempt, with node errors
        nodes.node(1).pause();
        nodes.node(2).pause();
        try {
          assertThrows(
              LockUnavailableException.class,
              () -> redlock.tryAcquire("m:d", Duration.ofSeconds(10)));
        } finally {
          nodes.node(1).resume();
          nodes.node(2).resume();
        }
        // 5. a kept-alive lease whose majority freezes: lost
        Lease kept = redlock.acquire("m:e", Duration.ofMillis(600), NO_HANG);
        kept.keepAlive();
        nodes.node(1).pause();
        nodes.node(2).pause();
        try {
          await().atMost(NO_HANG).until(() -> !kept.isValid());
          await().atMost(NO_HANG).until(() -> lost(registry) == 1.0);
        } finally {
          nodes.node(1).resume();
          nodes.node(2).resume();
        }
        kept.release();

        assertEquals(3, registry.get("redlock.acquire").tag("outcome", "acquired").timer().count());
        assertEquals(
            1, registry.get("redlock.acquire").tag("outcome", "held_elsewhere").timer().count());
        assertEquals(
            1,
            registry.get("redlock.acquire").tag("outcome", "quorum_unreachable").timer().count());
        assertTrue(
            registry
                    .get("redlock.acquire")
                    .tag("outcome", "acquired")
                    .timer()
                    .totalTime(java.util.concurrent.TimeUnit.NANOSECONDS)
                > 0);
        assertTrue(registry.get("redlock.leases.extended").counter().count() >= 1);
        assertEquals(1.0, lost(registry));
        double renewalOrExpiry =
            registry.get("redlock.leases.lost").tag("reason", "renewal_failed").counter().count()
                + registry.get("redlock.leases.lost").tag("reason", "expired").counter().count();
        assertEquals(1.0, renewalOrExpiry, "lost by renewal failure or expiry");
        assertEquals(0.0, registry.get("redlock.leases.held").gauge().value());
        double errors =
            registry.get("redlock.node.errors").tag("node", nodes.uris().get(1)).counters().stream()
                .mapToDouble(c -> c.count())
                .sum();
        assertTrue(errors >= 1, "the paused node's failure is counted: " + errors);
        assertTrue(
            registry.get("redlock.node.latency").tag("node", nodes.uris().get(0)).timer().count()
                >= 4);
        assertEquals(0.0, registry.get("redlock.nodes.quarantined").gauge().value());
      }
    }
  }

  @Test
  void aQuarantinedNodeIsCounted() throws Exception {
    try (RedisNodes nodes = redis.start(RedisFixture.nodes(3).unvouched())) {
      NodeData.vouchForNewNode(nodes.node(0), RedlockConfig.DEFAULT_KEY_PREFIX);
      NodeData.vouchForNewNode(nodes.node(1), RedlockConfig.DEFAULT_KEY_PREFIX);
      // node 2 is new and not vouched for: the restart guard keeps it out for maxTtl
      MeterRegistry registry = new SimpleMeterRegistry();
      try (Redlock redlock =
          Redlock.create(
              RedlockConfig.builder()
                  .nodes(nodes.uris())
                  .listener(new RedlockMetrics(registry))
                  .build())) {
        // With node 1 down, the vote needs node 2, which answers "quarantined".
        nodes.node(1).kill();
        LockUnavailableException e =
            assertThrows(
                LockUnavailableException.class,
                () -> redlock.tryAcquire("m:q", Duration.ofSeconds(5)));
        assertTrue(e.getMessage().contains("QUARANTINED"), e.getMessage());
        assertEquals(1.0, registry.get("redlock.nodes.quarantined").gauge().value());
      }
    }
  }

  @Test
  void aNullRegistryIsRefusedByName() {
    NullPointerException e =
        assertThrows(NullPointerException.class, () -> new RedlockMetrics(null));
    assertEquals("registry must not be null", e.getMessage());
  }

  private static double lost(MeterRegistry registry) {
    return registry.find("redlock.leases.lost").counters().stream()
        .mapToDouble(c -> c.count())
        .sum();
  }
}
