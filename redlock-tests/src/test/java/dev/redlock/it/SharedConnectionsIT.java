package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Many callers share each node's connections (issue 15, item 2): their requests are pipelined on
 * one socket and every reply must reach the request that sent it. A reply handed to the wrong
 * request is a double grant (a "yes" meant for a free key counted for a held one) or a lost vote,
 * so every test mixes resources that are free with resources another owner holds on a majority, and
 * checks each caller's outcome: held ones are never granted, free ones are.
 */
class SharedConnectionsIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  static final Duration TTL = Duration.ofSeconds(10);
  static final Duration NO_HANG = Duration.ofSeconds(60);
  static final String PREFIX = RedlockConfig.DEFAULT_KEY_PREFIX;

  /** Resource {@code r} is held elsewhere when odd. */
  static final IntPredicate HELD = r -> r % 2 == 1;

  static String resource(int thread, int r) {
    return "shared:" + thread + ":" + r;
  }

  /** Another owner holds the odd resources on nodes 1 and 2: a majority of 3, never ours. */
  static void holdOddResources(List<RedisNode> nodes, int threads, int resources) {
    for (RedisNode node : nodes.subList(1, 3)) {
      try (redis.clients.jedis.Jedis jedis = Admin.on(node)) {
        for (int t = 0; t < threads; t++) {
          for (int r = 0; r < resources; r++) {
            if (HELD.test(r)) {
              jedis.set(PREFIX + resource(t, r), "another-owner");
            }
          }
        }
      }
    }
  }

  /** What the workers saw: a grant of a held resource, and free resources not granted. */
  record Outcomes(List<String> heldButGranted, AtomicInteger freeNotGranted, AtomicInteger done) {
    Outcomes() {
      this(
          new java.util.concurrent.CopyOnWriteArrayList<>(),
          new AtomicInteger(),
          new AtomicInteger());
    }
  }

  /** {@code threads} workers, each taking and releasing its own resources until {@code stop}. */
  static List<Thread> workers(
      Redlock redlock, int threads, int resources, AtomicBoolean stop, Outcomes out) {
    List<Thread> workers = new ArrayList<>();
    CountDownLatch start = new CountDownLatch(1);
    for (int t = 0; t < threads; t++) {
      int thread = t;
      Thread worker =
          new Thread(
              () -> {
                try {
                  start.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (int i = 0; !stop.get(); i++) {
                  int r = i % resources;
                  Optional<Lease> lease;
                  try {
                    lease = redlock.tryAcquire(resource(thread, r), TTL);
                  } catch (LockUnavailableException e) {
                    lease = Optional.empty(); // too few answers in time: no grant, fine here
                    if (!HELD.test(r)) {
                      out.freeNotGranted.incrementAndGet();
                    }
                    out.done.incrementAndGet();
                    continue;
                  }
                  if (lease.isPresent()) {
                    if (HELD.test(r)) {
                      out.heldButGranted.add(
                          resource(thread, r) + " " + lease.get().nodeOutcomes());
                    }
                    lease.get().release();
                  } else if (!HELD.test(r)) {
                    out.freeNotGranted.incrementAndGet();
                  }
                  out.done.incrementAndGet();
                }
              },
              "shared-worker-" + t);
      worker.start();
      workers.add(worker);
    }
    start.countDown();
    return workers;
  }

  /** A short account: how many held resources were granted, and the first few. */
  static String granted(Outcomes out) {
    List<String> all = out.heldButGranted();
    return all.size()
        + " held resource(s) granted, replies misrouted; first: "
        + all.subList(0, Math.min(3, all.size()));
  }

  static void join(List<Thread> workers) throws InterruptedException {
    for (Thread worker : workers) {
      worker.join(NO_HANG.toMillis());
      assertTrue(!worker.isAlive(), worker.getName() + " still running: a caller hung");
    }
  }

  /**
   * 32 threads on one connection per node (the most sharing there can be): every held resource is
   * refused, every free one granted, and nothing is left in flight.
   */
  @Test
  void manyCallersOnOneConnectionEachGetTheirOwnReply() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    int threads = 32;
    int resources = 10;
    holdOddResources(nodes.all(), threads, resources);
    try (Redlock redlock =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(nodes.uris())
                .maxConnectionsPerNode(1)
                .maxAttemptsInFlight(threads) // all 32 on the connection, whatever the cores
                .nodeTimeout(Duration.ofMillis(500)) // generous: no timeouts on a loaded machine
                .build())) {
      Outcomes out = new Outcomes();
      AtomicBoolean stop = new AtomicBoolean();
      List<Thread> workers = workers(redlock, threads, resources, stop, out);
      await().atMost(NO_HANG).until(() -> out.done.get() >= 4000);
      stop.set(true);
      join(workers);
      assertTrue(out.heldButGranted().isEmpty(), () -> granted(out));
      assertEquals(0, out.freeNotGranted().get(), "free resources refused or failed");
      await("every reply read")
          .atMost(NO_HANG)
          .until(() -> redlock.requestsInFlight().values().stream().allMatch(n -> n == 0));
    }
  }

  /**
   * The same workload while a node's link is frozen and restored, again and again: its shared
   * connection breaks with requests in flight (they fail, the vote is lost) and is made again. No
   * held resource is ever granted, free ones are granted again once the link is back, and no caller
   * hangs.
   */
  @Test
  void aConnectionBrokenUnderLoadNeverHandsAReplyToTheWrongRequest() throws Exception {
    FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(3));
    int threads = 16;
    int resources = 10;
    holdOddResources(nodes.nodes().all(), threads, resources);
    try (Redlock redlock =
        Redlock.create(
            RedlockConfig.builder()
                .nodes(nodes.uris())
                .maxConnectionsPerNode(1)
                .nodeTimeout(Duration.ofMillis(100))
                .build())) {
      Outcomes out = new Outcomes();
      AtomicBoolean stop = new AtomicBoolean();
      List<Thread> workers = workers(redlock, threads, resources, stop, out);
      for (int round = 0; round < 5; round++) {
        int before = out.done.get();
        await().atMost(NO_HANG).until(() -> out.done.get() >= before + 200);
        nodes.freezeLink(1 + round % 2); // a holder of the held keys: those must still be refused
        int frozenAt = out.done.get();
        await().atMost(NO_HANG).until(() -> out.done.get() >= frozenAt + 100);
        nodes.restoreLinks();
      }
      stop.set(true);
      join(workers);
      assertTrue(out.heldButGranted().isEmpty(), () -> granted(out));
      // Once healed, every free resource is granted again: a fresh round with no fault.
      Outcomes after = new Outcomes();
      AtomicBoolean stopAfter = new AtomicBoolean();
      List<Thread> again = workers(redlock, threads, resources, stopAfter, after);
      await().atMost(NO_HANG).until(() -> after.done.get() >= 800);
      stopAfter.set(true);
      join(again);
      assertTrue(after.heldButGranted().isEmpty(), () -> granted(after));
      assertEquals(0, after.freeNotGranted().get(), "free resources refused after the heal");
      await("every reply read, or failed with its connection")
          .atMost(NO_HANG)
          .until(() -> redlock.requestsInFlight().values().stream().allMatch(n -> n == 0));
    }
  }
}
