package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.OverlapDetector;
import dev.redlock.testkit.RedisFixture;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Network faults between the client and the nodes, through a TCP fault proxy per node (the first
 * suites of the fault kit; see issue 5 for the rest). Each test starts its own nodes behind the
 * proxies ({@link RedisFixture#startBehindProxies}); they are stopped after it.
 */
class NetworkFaultsIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  static final Duration NO_HANG = Duration.ofSeconds(30);
  static final Duration TTL = Duration.ofSeconds(10);

  private static Redlock client(FaultyNodes nodes) {
    return Redlock.create(
        RedlockConfig.builder()
            .nodes(nodes.uris())
            .nodeTimeout(Duration.ofMillis(200))
            .retryDelay(Duration.ofMillis(10))
            .retryJitter(Duration.ofMillis(10))
            .build());
  }

  @Test
  void aSlowMinorityDoesNotStopMutualExclusionOrProgress() throws Exception {
    FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(5));
    nodes.proxy(0).latency(Duration.ofMillis(40));
    nodes.proxy(1).latency(Duration.ofMillis(40));
    OverlapDetector detector = new OverlapDetector();
    try (Redlock a = client(nodes);
        Redlock b = client(nodes)) {
      for (int i = 0; i < 20; i++) {
        Redlock redlock = i % 2 == 0 ? a : b;
        try (Lease lease =
            assertTimeoutPreemptively(
                NO_HANG, () -> redlock.acquire("net:slow", TTL, Duration.ofSeconds(10)))) {
          detector.enter("net:slow", "client" + (i % 2));
          assertTrue(lease.isValid());
          detector.exit("net:slow", "client" + (i % 2));
        }
      }
    }
    assertEquals(List.of(), detector.violations());
  }

  @Test
  void aCutMajorityFailsWithTheAccountAndServiceResumesWhenItHeals() {
    FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(3));
    try (Redlock redlock = client(nodes)) {
      nodes.proxy(0).cut();
      nodes.proxy(1).cut();
      LockUnavailableException e =
          assertTimeoutPreemptively(
              NO_HANG,
              () ->
                  assertThrows(
                      LockUnavailableException.class, () -> redlock.tryAcquire("net:cut", TTL)));
      assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
      for (int i = 0; i < 2; i++) {
        NodeOutcome outcome = e.nodeOutcomes().get(i);
        assertTrue(
            outcome.status() == NodeOutcome.Status.FAILED
                || outcome.status() == NodeOutcome.Status.TIMED_OUT,
            outcome.toString());
      }
      nodes.heal();
      Lease lease =
          await()
              .atMost(NO_HANG)
              .pollInterval(Duration.ofMillis(50))
              .ignoreException(LockUnavailableException.class)
              .until(() -> redlock.tryAcquire("net:cut", TTL).orElse(null), l -> l != null);
      lease.release();
    }
  }

  @Test
  void aFrozenLinkToAMinorityStillAcquiresWithinTheNodeTimeout() {
    FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(3));
    try (Redlock redlock = client(nodes)) {
      nodes.proxy(2).freeze();
      for (int i = 0; i < 3; i++) {
        Lease lease =
            assertTimeoutPreemptively(
                NO_HANG, () -> redlock.tryAcquire("net:frozen", TTL).orElseThrow());
        assertTrue(lease.isValid());
        lease.release();
      }
    }
  }
}
