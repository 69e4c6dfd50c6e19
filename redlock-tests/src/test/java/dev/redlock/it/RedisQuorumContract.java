package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockEvent;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.RedlockListener;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.OverlapDetector;
import dev.redlock.testkit.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * The lock's contract against real redis-server processes, run for every topology by the subclasses
 * (1, 3 and 5 nodes; Redis 7 and 6.2). Each test names its own resource.
 */
abstract class LockContract extends RealNodesTest {
  static final Duration TTL = Duration.ofSeconds(10);

  int n() {
    return nodes.size();
  }

  int quorum() {
    return n() / 2 + 1;
  }

  /** The largest number of nodes that may fail while a quorum is still reachable. */
  int minority() {
    return n() - quorum();
  }

  /**
   * Waits until no live node has the key, for at most half the ttl: if a rollback or release had
   * not happened, the key would still be there then; a loaded machine only makes it later.
   */
  void awaitNoKeyLeft(String why) {
    await(why).atMost(TTL.dividedBy(2)).until(() -> nodesWithKey() == 0);
  }

  // ---- happy path -------------------------------------------------------------------------

  @Test
  void acquireWritesTheKeyOnEveryNodeAndReleaseRemovesIt() throws Exception {
    Redlock redlock = client();
    try (Lease lease = redlock.acquire(resource, TTL, Duration.ofSeconds(2))) {
      assertEquals(resource, lease.resource());
      assertTrue(lease.isValid());
      assertTrue(
          lease.remainingValidity().compareTo(TTL) < 0, "validity is ttl minus elapsed and drift");
      assertTrue(
          lease.remainingValidity().compareTo(TTL.minusSeconds(1)) > 0,
          "healthy nodes leave most of the ttl");
      await()
          .atMost(NO_HANG)
          .until(() -> nodesWithKey() == n()); // stragglers beyond the quorum land too
      String token = Admin.get(nodes.node(0), key());
      for (RedisNode node : nodes.all()) {
        assertEquals(token, Admin.get(node, key()), "one token on every node");
        long pttl = Admin.pttl(node, key());
        assertTrue(pttl > 0 && pttl <= TTL.toMillis(), "key expires by the ttl, pttl=" + pttl);
      }
      assertFalse(lease.toString().contains(token), "a lease never prints its token");
      lease.release();
      assertTrue(nodesWithKey() <= n() - quorum(), "when release returns, a quorum is free");
    }
    awaitNoKeyLeft("and every node soon after");
  }

  @Test
  void tryAcquireGetsTheLockOnceAndIsEmptyWhileHeld() {
    Redlock a = client();
    Redlock b = client();
    Optional<Lease> first = a.tryAcquire(resource, TTL);
    assertTrue(first.isPresent());
    assertTrue(b.tryAcquire(resource, TTL).isEmpty(), "a second client cannot acquire while held");
    assertTrue(
        a.tryAcquire(resource, TTL).isEmpty(), "not reentrant: the same client cannot either");
    first.get().release();
    Optional<Lease> second = b.tryAcquire(resource, TTL);
    assertTrue(second.isPresent(), "free again after release");
    second.get().release();
  }

  @Test
  void acquireGivesUpAfterMaxWaitWhenHeldElsewhere() throws Exception {
    Redlock a = client();
    Redlock b = client();
    try (Lease held = a.acquire(resource, TTL, Duration.ZERO)) {
      LockUnavailableException e =
          assertTimeoutPreemptively(
              NO_HANG,
              () ->
                  assertThrows(
                      LockUnavailableException.class,
                      () -> b.acquire(resource, TTL, Duration.ofMillis(300))));
      assertEquals(LockUnavailableException.Reason.HELD_ELSEWHERE, e.reason());
      assertEquals(resource, e.resource());
      assertTrue(e.attempts() > 1, "it retried: " + e.attempts());
      assertEquals(n(), e.nodeOutcomes().size());
      assertTrue(
          e.getMessage().contains("held elsewhere") && e.getMessage().contains(nodes.node(0).uri()),
          e.getMessage());
      assertTrue(held.isValid());
    }
  }

  @Test
  void keysUseTheConfiguredPrefix() {
    nodes.all().forEach(node -> NodeData.vouchForNewNode(node, "payments/"));
    Redlock redlock = client(config().keyPrefix("payments/").build());
    Lease lease = redlock.tryAcquire(resource, TTL).orElseThrow();
    await()
        .atMost(NO_HANG)
        .until(
            () ->
                Admin.get(nodes.node(0), "payments/" + resource)
                    != null); // node 0 may answer after the quorum
    assertNull(Admin.get(nodes.node(0), key()));
    lease.release();
    await().atMost(NO_HANG).until(() -> Admin.get(nodes.node(0), "payments/" + resource) == null);
  }

  @Test
  void listenersSeeEachLeaseFromGrantToRelease() {
    List<LockEvent> events = new java.util.concurrent.CopyOnWriteArrayList<>();
    Redlock redlock =
        client(config().listener(events::add).listener(RedlockListener.auditLog()).build());
    Lease lease = redlock.tryAcquire(resource, TTL).orElseThrow();
    lease.release();
    assertEquals(
        List.of(LockEvent.Kind.ATTEMPT, LockEvent.Kind.ACQUIRED, LockEvent.Kind.RELEASED),
        events.stream().map(LockEvent::kind).toList());
    assertEquals(lease.fencingToken(), events.get(1).fencingToken());
    assertEquals(n(), events.get(1).nodeOutcomes().size());
  }

  // ---- ownership ----------------------------------------------------------------------------

  @Test
  void releaseAndExtendNeverTouchAnotherOwnersKey() {
    Redlock redlock = client();
    Lease lease = redlock.tryAcquire(resource, TTL).orElseThrow();
    // Another owner's token replaces ours on every node (as after an expiry and a new grant).
    nodes.all().forEach(node -> Admin.set(node, key(), "another-owner"));
    assertTrue(lease.isValid(), "locally the lease still looks valid");
    assertFalse(lease.extend(TTL), "extend is owner-checked on the nodes");
    for (RedisNode node : nodes.all()) {
      assertEquals(
          -1, Admin.pttl(node, key()), "extend did not set a ttl on the other owner's key");
    }
    lease.release();
    for (RedisNode node : nodes.all()) {
      assertEquals(
          "another-owner", Admin.get(node, key()), "release did not delete the other owner's key");
    }
  }

  @Test
  void afterExpiryAnotherClientWinsAndTheFirstReleaseLeavesItAlone() {
    Redlock a = client();
    Redlock b = client();
    Duration shortTtl = Duration.ofMillis(400);
    Lease first = a.tryAcquire(resource, shortTtl).orElseThrow();
    Lease second =
        await()
            .atMost(NO_HANG)
            .pollInterval(Duration.ofMillis(20))
            .until(() -> b.tryAcquire(resource, TTL).orElse(null), lease -> lease != null);
    assertFalse(first.isValid(), "the first lease had expired by the time the second was granted");
    assertFalse(first.extend(shortTtl), "an expired lease is never extended");
    // B holds a quorum; a node whose copy of A's key had not quite expired when B asked refused
    // B, so B's token need not be on every node. Wait until B's requests have all settled.
    await()
        .atMost(NO_HANG)
        .until(
            () ->
                second.nodeOutcomes().stream()
                    .noneMatch(o -> o.status() == NodeOutcome.Status.PENDING));
    List<String> before = nodes.all().stream().map(node -> Admin.get(node, key())).toList();
    assertTrue(
        before.stream().filter(java.util.Objects::nonNull).distinct().count() == 1
            && before.stream().filter(java.util.Objects::nonNull).count() >= quorum(),
        "B's token on a quorum: " + before);
    first.release();
    List<String> after = nodes.all().stream().map(node -> Admin.get(node, key())).toList();
    for (int i = 0; i < n(); i++) {
      if (before.get(i) != null) {
        assertEquals(
            before.get(i), after.get(i), "stale release left the new owner's key on node " + i);
      }
    }
    assertTrue(second.isValid());
    second.release();
  }

  @Test
  void extendMovesValidityForwardOnTheNodes() {
    Redlock redlock = client();
    Lease lease = redlock.tryAcquire(resource, Duration.ofSeconds(1)).orElseThrow();
    assertTrue(lease.extend(Duration.ofSeconds(30)));
    assertTrue(
        lease.remainingValidity().compareTo(Duration.ofSeconds(20)) > 0,
        "validity was moved forward");
    await()
        .atMost(NO_HANG)
        .until(() -> nodes.all().stream().allMatch(node -> Admin.pttl(node, key()) > 20_000));
    lease.release();
    assertThrows(
        IllegalStateException.class,
        () -> lease.extend(TTL),
        "a released lease cannot be extended");
  }

  /**
   * A kept-alive lease given a short extend keeps its validity and its renewal schedule: before,
   * the extend's shorter validity replaced the renewal's, and the lease was lost before its next
   * renewal fell due.
   */
  @Test
  void aKeptAliveLeaseSurvivesAShorterExtend() {
    Redlock redlock = client();
    Lease lease = redlock.tryAcquire(resource, Duration.ofSeconds(3)).orElseThrow().keepAlive();
    assertTrue(lease.extend(Duration.ofMillis(500)));
    await()
        .during(Duration.ofSeconds(4)) // past the shorter validity and more than a renewal
        .atMost(NO_HANG)
        .until(lease::isValid);
    lease.release();
  }

  /**
   * A kept-alive lease given an extend longer than its ttl renews at its own pace: before, renewals
   * were counted from the extend's start, fell due at once and ran in a tight loop.
   */
  @Test
  void aKeptAliveLeaseGivenALongerExtendRenewsAtItsPace() {
    java.util.concurrent.atomic.AtomicInteger renewals =
        new java.util.concurrent.atomic.AtomicInteger();
    Redlock redlock =
        client(
            config()
                .listener(
                    event -> {
                      if (event.kind() == LockEvent.Kind.EXTENDED) {
                        renewals.incrementAndGet();
                      }
                    })
                .build());
    Lease lease = redlock.tryAcquire(resource, Duration.ofMillis(900)).orElseThrow().keepAlive();
    assertTrue(lease.extend(Duration.ofSeconds(30)));
    int before = renewals.get();
    await().during(Duration.ofSeconds(2)).atMost(NO_HANG).until(lease::isValid);
    int during = renewals.get() - before;
    lease.release();
    // One renewal every ttl × renewalFraction (300 ms): about 7 in 2 s. The loop made thousands.
    assertTrue(during <= 20, during + " renewals in 2 s");
  }

  @Test
  void releaseIsIdempotentAndSurvivesAScriptFlush() {
    Redlock redlock = client();
    Lease lease = redlock.tryAcquire(resource, TTL).orElseThrow();
    for (RedisNode node : nodes.all()) {
      try (Jedis jedis = Admin.on(node)) {
        jedis.scriptFlush(); // the node forgets our scripts: EVALSHA answers NOSCRIPT
      }
    }
    lease.release();
    awaitNoKeyLeft("release fell back to EVAL after NOSCRIPT");
    lease.release();
    lease.close();
    assertFalse(lease.isValid());
    assertEquals(Duration.ZERO, lease.remainingValidity());
  }

  // ---- contention ---------------------------------------------------------------------------

  @Test
  void manyClientsAndThreadsNeverHoldTheLockAtOnce() throws Exception {
    int clientsCount = 3;
    int threadsPerClient = 4;
    int rounds = 15;
    OverlapDetector detector = new OverlapDetector();
    AtomicInteger granted = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(clientsCount * threadsPerClient);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int c = 0; c < clientsCount; c++) {
        Redlock redlock = client();
        for (int t = 0; t < threadsPerClient; t++) {
          String holder = "client" + c + "-thread" + t;
          workers.add(
              pool.submit(
                  () -> {
                    for (int i = 0; i < rounds; i++) {
                      try (Lease lease = redlock.acquire(resource, TTL, Duration.ofSeconds(60))) {
                        detector.enter(resource, holder);
                        granted.incrementAndGet();
                        assertTrue(lease.isValid());
                        detector.exit(resource, holder);
                      }
                    }
                    return null;
                  }));
        }
      }
      for (Future<?> worker : workers) {
        worker.get();
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(List.of(), detector.violations());
    assertEquals(clientsCount * threadsPerClient * rounds, granted.get());
    awaitNoKeyLeft("every lease was released");
  }

  @Test
  void aFailedAttemptLeavesNoKeyBehind() {
    // Another owner holds the key on just enough nodes to block a quorum; we win the rest.
    int blockers = n() - quorum() + 1;
    for (int i = 0; i < blockers; i++) {
      Admin.set(nodes.node(i), key(), "another-owner");
    }
    assertTrue(client().tryAcquire(resource, TTL).isEmpty());
    await("a lost attempt is rolled back")
        .atMost(TTL.dividedBy(2))
        .untilAsserted(
            () -> {
              for (int i = 0; i < n(); i++) {
                String value = Admin.get(nodes.node(i), key());
                assertEquals(
                    i < blockers ? "another-owner" : null,
                    value,
                    "node " + i + " after a lost attempt");
              }
            });
  }

  // ---- faults -------------------------------------------------------------------------------

  @Test
  void stillAcquiresWithAMinorityKilled() throws Exception {
    for (int i = 0; i < minority(); i++) {
      nodes.node(i).kill();
    }
    Redlock redlock = client();
    Lease lease =
        assertTimeoutPreemptively(
            NO_HANG, () -> redlock.acquire(resource, TTL, Duration.ofSeconds(5)));
    assertTrue(lease.isValid());
    assertEquals(quorum(), nodesWithKey(), "held on every live node");
    lease.release();
    awaitNoKeyLeft("released on every live node");
  }

  @Test
  void stillAcquiresWithAMinorityFrozen() throws Exception {
    for (int i = 0; i < minority(); i++) {
      nodes.node(i).pause();
    }
    Redlock redlock = client();
    for (int round = 0; round < 3; round++) {
      // Each attempt decides on the quorum and does not wait for the frozen nodes.
      Lease lease =
          assertTimeoutPreemptively(NO_HANG, () -> redlock.tryAcquire(resource, TTL).orElseThrow());
      assertTrue(lease.isValid());
      lease.release();
    }
    awaitNoKeyLeft("released on every live node");
  }

  @Test
  void aMajorityDownFailsWithinMaxWaitWithTheNodeAccount() {
    for (int i = 0; i < minority() + 1; i++) {
      nodes.node(i).kill();
    }
    Redlock redlock = client();
    LockUnavailableException e =
        assertTimeoutPreemptively(
            NO_HANG,
            () ->
                assertThrows(
                    LockUnavailableException.class,
                    () -> redlock.acquire(resource, TTL, Duration.ofMillis(500))));
    assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
    for (int i = 0; i < minority() + 1; i++) {
      NodeOutcome outcome = e.nodeOutcomes().get(i);
      assertEquals(nodes.node(i).uri(), outcome.node());
      assertEquals(NodeOutcome.Status.FAILED, outcome.status());
      assertTrue(outcome.detail().contains("connection refused"), outcome.toString());
      assertTrue(e.getMessage().contains(nodes.node(i).uri()), e.getMessage());
    }
    awaitNoKeyLeft("nothing left on the live nodes");
  }

  @Test
  void aMajorityFrozenFailsWithTimedOutNodesAndLeavesNoKeyOnLiveNodes() {
    for (int i = 0; i < minority() + 1; i++) {
      nodes.node(i).pause();
    }
    Redlock redlock = client();
    LockUnavailableException e =
        assertTimeoutPreemptively(
            NO_HANG,
            () ->
                assertThrows(
                    LockUnavailableException.class, () -> redlock.tryAcquire(resource, TTL)));
    assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
    for (int i = 0; i < minority() + 1; i++) {
      assertEquals(NodeOutcome.Status.TIMED_OUT, e.nodeOutcomes().get(i).status(), e.getMessage());
    }
    awaitNoKeyLeft("rolled back on the live nodes");
  }

  // ---- errors and lifecycle -----------------------------------------------------------------

  @Test
  void aWrongPasswordIsReportedPerNodeWithoutThePassword() {
    String password = "right-password";
    for (RedisNode node : nodes.all()) {
      try (Jedis jedis = Admin.on(node)) {
        jedis.configSet("requirepass", password);
      }
    }
    try {
      List<String> wrong =
          nodes.all().stream()
              .map(node -> "redis://:wrong-password@127.0.0.1:" + node.port())
              .toList();
      Redlock redlock =
          client(RedlockConfig.builder().nodes(wrong).nodeTimeout(Duration.ofMillis(500)).build());
      LockUnavailableException e =
          assertThrows(LockUnavailableException.class, () -> redlock.tryAcquire(resource, TTL));
      assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
      for (NodeOutcome outcome : e.nodeOutcomes()) {
        assertTrue(outcome.detail().startsWith("authentication failed"), outcome.toString());
      }
      assertFalse(e.getMessage().contains("wrong-password"), e.getMessage());

      List<String> right =
          nodes.all().stream()
              .map(node -> "redis://:" + password + "@127.0.0.1:" + node.port())
              .toList();
      Redlock authenticated = client(RedlockConfig.builder().nodes(right).build());
      authenticated.tryAcquire(resource, TTL).orElseThrow().release();
    } finally {
      for (RedisNode node : nodes.all()) {
        try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
          jedis.auth(password);
          jedis.configSet("requirepass", "");
        }
      }
    }
  }

  @Test
  void closeLeavesNoThreadsNoConnectionsAndNoLocks() throws Exception {
    Redlock redlock = Redlock.create(config().build());
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> work = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        work.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 10; i++) {
                    redlock
                        .acquire(resource + ":" + thread + ":" + i, TTL, Duration.ofSeconds(5))
                        .release();
                  }
                  return null;
                }));
      }
      for (Future<?> f : work) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
    Lease stillHeld = redlock.tryAcquire(resource, TTL).orElseThrow();
    assertTrue(
        nodes.all().stream().allMatch(node -> Admin.redlockClients(node) > 0),
        "connections were pooled");
    redlock.close();
    redlock.close(); // idempotent
    assertFalse(stillHeld.isValid(), "close releases what is still held");
    awaitNoKeyLeft("close released the lease on the nodes");
    await()
        .atMost(NO_HANG)
        .untilAsserted(
            () -> {
              for (RedisNode node : nodes.all()) {
                assertEquals(0, Admin.redlockClients(node), "connections left open on " + node);
              }
              assertEquals(
                  List.of(),
                  Thread.getAllStackTraces().keySet().stream()
                      .filter(t -> t.getName().startsWith("redlock-io-"))
                      .map(Thread::getName)
                      .toList());
            });
    assertThrows(IllegalStateException.class, () -> redlock.tryAcquire(resource, TTL));
    assertThrows(IllegalStateException.class, () -> redlock.acquire(resource, TTL, Duration.ZERO));
  }
}
