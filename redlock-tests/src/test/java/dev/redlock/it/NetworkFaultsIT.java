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
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.OverlapDetector;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
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

  /**
   * A job that re-takes its lock at once after releasing it (issue 15, item 1): on a node whose
   * replies are slow, our release is still queued behind the earlier SET's reply when the next SET
   * NX goes out. The next take must follow it there, not reach the node first and be refused by our
   * own old key (which left the new lease on a bare quorum, and failed attempts in the bench).
   */
  @Test
  void aLockReTakenAtOnceIsNotRefusedByItsOwnReleaseStillOnTheWay() throws Exception {
    FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(3));
    String key = RedlockConfig.DEFAULT_KEY_PREFIX + "net:retake";
    RedisNode slow = nodes.node(2);
    // A node timeout far above node 2's two round trips (release, then our SET): the SET's turn
    // comes well before its vote's deadline, even on a loaded machine.
    try (Redlock redlock =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(nodes.uris())
                .nodeTimeout(Duration.ofMillis(600))
                .build())) {
      // Two open connections to node 2, made while it is fast (a handshake under the latency
      // would take round trips of its own), so one request can go out while another awaits its
      // reply.
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                Thread other =
                    new Thread(
                        () -> redlock.tryAcquire("net:retake:b", TTL).ifPresent(Lease::close));
                other.start();
                redlock.tryAcquire("net:retake:a", TTL).ifPresent(Lease::close);
                other.join();
                return Admin.redlockClients(slow) >= 2;
              });
      awaitNoConnectionInUse(redlock);
      nodes.proxy(2).latency(Duration.ofMillis(80)); // node 2 acts at once, answers late
      Lease first = redlock.tryAcquire("net:retake", TTL).orElseThrow(); // won on nodes 0 and 1
      await()
          .atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(1))
          .until(() -> Admin.get(slow, key) != null); // node 2 took it; its reply is on its way
      first.close(); // confirmed by 0 and 1; node 2's release waits for its SET's reply
      Lease second = redlock.tryAcquire("net:retake", TTL).orElseThrow();
      // Once the first release has landed on node 2, only the second lease can set the key there;
      // taken before that release, it was refused by our own old key and never held node 2.
      await() // node 2's own answer (before it, the account may say PENDING or TIMED_OUT)
          .atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(20))
          .until(
              () -> {
                NodeOutcome.Status s = second.nodeOutcomes().get(2).status();
                return s == NodeOutcome.Status.OK || s == NodeOutcome.Status.REFUSED;
              });
      assertEquals(
          NodeOutcome.Status.OK,
          second.nodeOutcomes().get(2).status(),
          second.nodeOutcomes().toString());
      assertTrue(Admin.get(slow, key) != null, "node 2 holds the second lease");
      second.close();
      await()
          .atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> Admin.get(slow, key) == null);
    }
  }

  /**
   * The same job in a tight loop on a slow node: each take follows the previous release there, but
   * a take whose turn comes after its vote's deadline does not send there at all, so the chain of
   * requests behind the slow node stays short. Without that bound it grew by a round trip per
   * cycle, and node 2 worked through the backlog long after the loop ended.
   */
  @Test
  void aTightLoopOnASlowNodeLeavesNoBacklogBehindIt() throws Exception {
    FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(3));
    String key = RedlockConfig.DEFAULT_KEY_PREFIX + "net:loop";
    RedisNode slow = nodes.node(2);
    try (Redlock redlock = client(nodes)) {
      nodes.proxy(2).latency(Duration.ofMillis(80));
      for (int i = 0; i < 200; i++) { // ~1 ms a cycle on nodes 0 and 1; node 2 takes 80 ms a reply
        redlock.tryAcquire("net:loop", TTL).orElseThrow().close();
      }
      // 200 cycles of two round trips each would keep node 2 busy for 32 s: bounded, it is done
      // within a few replies.
      await()
          .atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(20))
          .until(
              () ->
                  Admin.get(slow, key) == null
                      && redlock.requestsInFlight().values().stream().allMatch(n -> n == 0));
    }
  }

  private static void awaitNoConnectionInUse(Redlock redlock) {
    await()
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(10))
        .until(() -> redlock.requestsInFlight().values().stream().allMatch(n -> n == 0));
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
