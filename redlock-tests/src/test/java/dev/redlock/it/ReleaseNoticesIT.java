package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.args.ClientType;
import redis.clients.jedis.params.ClientKillParams;

/**
 * Release notices (issue 15 item 4): a release by another client wakes this service's first waiter
 * through the nodes (pub/sub on the lock key's channel), so waiting for another client's lock costs
 * no polling. Retry pauses are a minute long here, so a grant within seconds can only come from a
 * notice; a notice lost (its connection killed) or refused (an ACL without channels) falls back to
 * the pause, and the subscriber connection comes back by itself.
 */
class ReleaseNoticesIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  static final Duration TTL = Duration.ofSeconds(30);
  static final Duration MINUTE = Duration.ofSeconds(60);
  static final Duration BOUND = Duration.ofSeconds(10);

  private final List<Thread> started = new CopyOnWriteArrayList<>();

  @AfterEach
  void stopThreads() throws InterruptedException {
    for (Thread t : started) {
      t.interrupt();
      t.join(BOUND.toMillis());
    }
  }

  private static Redlock client(List<String> uris, Duration retryDelay) {
    return Redlock.create(
        RedlockConfig.builder()
            .nodes(uris)
            .nodeTimeout(Duration.ofMillis(200))
            .retryDelay(retryDelay)
            .retryJitter(Duration.ZERO)
            .build());
  }

  /** Starts a thread that acquires {@code resource} and releases it at once. */
  private AtomicReference<Object> waiter(Redlock redlock, String resource, Duration maxWait) {
    AtomicReference<Object> outcome = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              try (Lease lease = redlock.acquire(resource, TTL, maxWait)) {
                outcome.set(lease.isValid() ? "granted" : "invalid");
              } catch (Throwable e) {
                outcome.set(e);
              }
            },
            "waiter");
    started.add(t);
    t.start();
    // In line: parked by the lock service between attempts.
    await()
        .atMost(BOUND)
        .until(
            () -> {
              Object blocker = java.util.concurrent.locks.LockSupport.getBlocker(t);
              return blocker != null && blocker.getClass().getSimpleName().equals("Waiters");
            });
    return outcome;
  }

  /** The subscriber connections a node has open for release notices, and their channels. */
  private static List<String> subscribers(RedisNode node) {
    try (Jedis jedis = Admin.on(node)) {
      return Arrays.stream(jedis.clientList().split("\n"))
          .filter(line -> line.contains(" name=redlock-notices "))
          .toList();
    }
  }

  private static boolean subscribedEverywhere(RedisNodes nodes, int channels) {
    return subscribedEverywhere(nodes, channels, 1);
  }

  /** Every node has {@code clients} subscriber connections with {@code channels} channels. */
  private static boolean subscribedEverywhere(RedisNodes nodes, int channels, int clients) {
    return nodes.all().stream()
        .allMatch(
            n ->
                subscribers(n).stream()
                        .filter(line -> line.contains(" sub=" + channels + " "))
                        .count()
                    >= clients);
  }

  /** Planted: without the PUBLISH in release.lua the waiter sleeps its minute and this fails. */
  @Test
  void aReleaseByAnotherClientWakesTheWaiterAtOnce() throws Exception {
    RedisNodes nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock holder = client(nodes.uris(), MINUTE);
        Redlock service = client(nodes.uris(), MINUTE)) {
      Lease held = holder.tryAcquire("notices:wake", TTL).orElseThrow();
      AtomicReference<Object> outcome = waiter(service, "notices:wake", MINUTE.multipliedBy(2));
      await().atMost(BOUND).until(() -> subscribedEverywhere(nodes, 1));
      held.release();
      await().atMost(BOUND).until(() -> outcome.get() != null);
      assertEquals("granted", outcome.get());
      // Nobody waits any more: the channel is given up (the connection stays for the next line).
      await().atMost(BOUND).until(() -> subscribedEverywhere(nodes, 0));
    }
  }

  /**
   * A killed subscriber connection loses notices (the waiter falls back to its pause) and comes
   * back by itself, subscribed again. Planted: a reader thread that ends for good on a broken
   * connection never resubscribes, and the last release wakes nobody.
   */
  @Test
  void aLostSubscriberComesBackAndSubscribesAgain() throws Exception {
    RedisNodes nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock holder = client(nodes.uris(), MINUTE);
        Redlock service = client(nodes.uris(), MINUTE)) {
      Lease held = holder.tryAcquire("notices:lost", TTL).orElseThrow();
      AtomicReference<Object> outcome = waiter(service, "notices:lost", MINUTE.multipliedBy(2));
      await().atMost(BOUND).until(() -> subscribedEverywhere(nodes, 1));
      for (RedisNode node : nodes.all()) {
        try (Jedis jedis = Admin.on(node)) {
          jedis.clientKill(ClientKillParams.clientKillParams().type(ClientType.PUBSUB));
        }
      }
      await().atMost(BOUND).until(() -> subscribedEverywhere(nodes, 1));
      held.release();
      await().atMost(BOUND).until(() -> outcome.get() != null);
      assertEquals("granted", outcome.get());
    }
  }

  /**
   * A user whose ACL grants no channels (Redis 7's default for a new user) still releases: the
   * publish inside release.lua is a pcall. Its waiters are not told, so they poll. Planted: a plain
   * {@code redis.call('PUBLISH', ...)} fails the script after its DEL, and the release is taken for
   * unconfirmed (and re-sent, failing again).
   */
  @Test
  void aUserWithoutChannelsStillReleasesAndItsWaitersPoll() throws Exception {
    RedisNodes nodes = redis.start(RedisFixture.nodes(3));
    for (RedisNode node : nodes.all()) {
      try (Jedis jedis = Admin.on(node)) {
        jedis.aclSetUser("nochannels", "on", ">pw", "~*", "+@all", "resetchannels");
      }
    }
    List<String> uris =
        nodes.all().stream().map(n -> "redis://nochannels:pw@127.0.0.1:" + n.port()).toList();
    try (Redlock holder = client(uris, MINUTE);
        Redlock service = client(uris, Duration.ofMillis(100))) {
      Lease held = holder.tryAcquire("notices:acl", TTL).orElseThrow();
      AtomicReference<Object> outcome = waiter(service, "notices:acl", MINUTE);
      held.release();
      await().atMost(BOUND).until(() -> outcome.get() != null);
      assertEquals("granted", outcome.get());
      for (RedisNode node : nodes.all()) {
        // No script failed but for NOSCRIPT (once per script, before it is loaded). The key alone
        // would not tell: a script that fails on its PUBLISH has deleted the key already.
        try (Jedis jedis = Admin.on(node)) {
          assertEquals(
              stat(jedis.info("errorstats"), "errorstat_NOSCRIPT:count="),
              stat(jedis.info("commandstats"), "cmdstat_evalsha:", "failed_calls="),
              "scripts failed on " + node);
        }
      }
    }
  }

  private static long stat(String info, String line, String... field) {
    for (String l : info.split("\r?\n")) {
      if (l.startsWith(line)) {
        String rest = l.substring(line.length());
        if (field.length > 0) {
          rest = rest.substring(rest.indexOf(field[0]) + field[0].length());
        }
        return Long.parseLong(rest.split(",")[0].trim());
      }
    }
    return 0;
  }

  /**
   * Two services waiting for one lock take turns: a release that other clients were told of (by a
   * quorum of nodes) leaves the lock to them instead of waking the releasing service's own next
   * waiter, whose pause is a minute. Planted: waking our own first whatever the nodes said makes
   * {@code a1} ask again at A's release (its attempts go from 1 to 2).
   */
  @Test
  void servicesWaitingForOneLockTakeTurns() throws Exception {
    RedisNodes nodes = redis.start(RedisFixture.nodes(3));
    java.util.Map<String, Integer> attempts = new java.util.concurrent.ConcurrentHashMap<>();
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes(nodes.uris())
            .nodeTimeout(Duration.ofMillis(200))
            .retryDelay(MINUTE)
            .retryJitter(Duration.ZERO)
            .listener(
                e -> {
                  if (e.kind() == dev.redlock.LockEvent.Kind.ATTEMPT) {
                    attempts.merge(Thread.currentThread().getName(), 1, Integer::sum);
                  }
                })
            .build();
    try (Redlock a = Redlock.create(config);
        Redlock b = Redlock.create(config)) {
      Lease held = a.tryAcquire("notices:turns", TTL).orElseThrow();
      java.util.concurrent.CountDownLatch b1Releases = new java.util.concurrent.CountDownLatch(1);
      AtomicReference<Object> a1 = holder("a1", a, "notices:turns", null);
      AtomicReference<Object> b1 = holder("b1", b, "notices:turns", b1Releases);
      await().atMost(BOUND).until(() -> subscribedEverywhere(nodes, 1, 2));
      held.release(); // B waits: the lock is left to b1, and a1 is not woken
      await().atMost(BOUND).until(() -> "granted".equals(b1.get()));
      assertEquals(1, attempts.getOrDefault("a1", 0), "a1 asked again at A's release");
      assertNull(a1.get());
      b1Releases.countDown(); // A waits: left to a1, told by the nodes
      await().atMost(BOUND).until(() -> "granted".equals(a1.get()));
    }
  }

  /** A thread that acquires {@code resource} and holds it until {@code release} (or at once). */
  private AtomicReference<Object> holder(
      String name, Redlock redlock, String resource, java.util.concurrent.CountDownLatch release) {
    AtomicReference<Object> outcome = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              try (Lease lease = redlock.acquire(resource, TTL, MINUTE.multipliedBy(2))) {
                outcome.set(lease.isValid() ? "granted" : "invalid");
                if (release != null) {
                  release.await();
                }
              } catch (Throwable e) {
                outcome.set(e);
              }
            },
            name);
    started.add(t);
    t.start();
    await().atMost(BOUND).until(() -> inLine(t));
    return outcome;
  }

  private static boolean inLine(Thread t) {
    Object blocker = java.util.concurrent.locks.LockSupport.getBlocker(t);
    return blocker != null && blocker.getClass().getSimpleName().equals("Waiters");
  }

  /** Closing a service ends its subscriber connections and their threads. */
  @Test
  void closeEndsTheSubscribersAndTheirThreads() throws Exception {
    RedisNodes nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock holder = client(nodes.uris(), MINUTE)) {
      Lease held = holder.tryAcquire("notices:close", TTL).orElseThrow();
      Redlock service = client(nodes.uris(), MINUTE);
      AtomicReference<Object> outcome = waiter(service, "notices:close", MINUTE);
      await().atMost(BOUND).until(() -> subscribedEverywhere(nodes, 1));
      service.close();
      await().atMost(BOUND).until(() -> outcome.get() != null);
      await()
          .atMost(BOUND)
          .until(() -> nodes.all().stream().allMatch(n -> subscribers(n).isEmpty()));
      await()
          .atMost(BOUND)
          .until(
              () ->
                  Thread.getAllStackTraces().keySet().stream()
                      .noneMatch(
                          t ->
                              t.getName().startsWith("redlock-io-notices-")
                                  && t.getName().endsWith(":" + nodes.node(0).port())));
      held.release();
      assertFalse(outcome.get() instanceof String, "closed, not granted: " + outcome.get());
    }
  }
}
