package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockEvent;
import dev.redlock.Redlock;
import dev.redlock.RedlockException;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Interrupted and cancelled callers give every connection back (issue 13, item 2): whatever a
 * caller was doing when interrupted — waiting for a connection, for replies, between retries —
 * every request it wrote is read by someone, its connection returns to the pool, and what it rolled
 * back is confirmed, here or later. Two of five nodes are frozen in most tests, so that requests to
 * them hold connections for the whole node timeout; the pools are small, so one leaked connection
 * shows.
 */
class InterruptsIT extends RealNodesTest {
  InterruptsIT() {
    super(RedisFixture.nodes(5));
  }

  static final Duration TTL = Duration.ofSeconds(5);

  /** Far above what giving back takes (a node timeout or two), far below a leak's forever. */
  static final Duration GIVEN_BACK = Duration.ofSeconds(5);

  /**
   * Two connections per node, and turns for more attempts than these tests' twenty callers: they
   * are about many requests on few connections, whatever the default for this machine's cores.
   */
  Redlock smallPools() {
    return client(config().maxConnectionsPerNode(2).maxAttemptsInFlight(64).build());
  }

  List<RedisNode> healthy() {
    return nodes.all().subList(0, 3);
  }

  void freezeTheLastTwo() {
    nodes.node(3).pause();
    nodes.node(4).pause();
  }

  /** Waits until the listed nodes' connections are all back in the pool. */
  static void awaitGivenBack(Redlock redlock, List<RedisNode> which) {
    await("every connection of " + which + " back in its pool")
        .atMost(GIVEN_BACK)
        .until(
            () -> {
              Map<String, Integer> inUse = redlock.requestsInFlight();
              return which.stream().allMatch(n -> inUse.get(n.uri()) == 0);
            });
  }

  /** Plain attempts right after: every one must win on the three healthy nodes. */
  void tenPlainAttemptsWin(Redlock redlock) {
    int won = 0;
    for (int i = 0; i < 10; i++) {
      Optional<Lease> lease = redlock.tryAcquire(resource(), TTL);
      if (lease.isPresent()) {
        won++;
        lease.get().release();
      }
    }
    assertEquals(10, won, "plain attempts won after the interrupted ones");
  }

  @Test
  void interruptedAcquirersGiveTheHealthyNodesTheirConnectionsBack() throws Exception {
    Redlock redlock = smallPools();
    freezeTheLastTwo();
    AtomicInteger attempts = new AtomicInteger();
    ExecutorService callers = Executors.newFixedThreadPool(20);
    for (int i = 0; i < 20; i++) {
      String mine = resource() + ":" + i;
      callers.execute(
          () -> {
            while (!Thread.currentThread().isInterrupted()) {
              attempts.incrementAndGet();
              try {
                redlock.tryAcquire(mine, TTL).ifPresent(Lease::release);
              } catch (RedlockException e) {
                // lost votes, interrupts: the loop ends when the flag says so
              }
            }
          });
    }
    await().atMost(NO_HANG).until(() -> attempts.get() >= 100);
    callers.shutdownNow(); // what Future.cancel(true) and a closing executor do
    assertTrue(
        callers.awaitTermination(10, TimeUnit.SECONDS),
        "every interrupted caller returned (the interrupt was not swallowed)");
    awaitGivenBack(redlock, healthy());
    tenPlainAttemptsWin(redlock);
    nodes.node(3).resume();
    nodes.node(4).resume();
    awaitGivenBack(redlock, nodes.all());
  }

  /**
   * Twenty waiters, each for its own held resource (one service's waiters for one resource stand in
   * line and only the first asks, so distinct resources keep twenty attempts in flight on two
   * connections per node), cancelled while two nodes are frozen.
   */
  @Test
  void cancelledWaitersGiveEveryConnectionBack() throws Exception {
    Redlock redlock = smallPools();
    List<Lease> holders = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      holders.add(redlock.acquire(resource() + ":" + i, TTL, Duration.ofSeconds(5)));
    }
    freezeTheLastTwo();
    AtomicInteger attempts = new AtomicInteger();
    Redlock waiters =
        client(
            config()
                .maxConnectionsPerNode(2)
                .maxAttemptsInFlight(64) // twenty attempts in flight, whatever the cores
                .listener(
                    event -> {
                      if (event.kind() == LockEvent.Kind.ATTEMPT) {
                        attempts.incrementAndGet();
                      }
                    })
                .build());
    ExecutorService callers = Executors.newFixedThreadPool(20);
    List<Future<Lease>> waiting = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      String resource = resource() + ":" + i;
      waiting.add(callers.submit(() -> waiters.acquire(resource, TTL, NO_HANG)));
    }
    await().atMost(NO_HANG).until(() -> attempts.get() >= 60);
    waiting.forEach(f -> f.cancel(true));
    callers.shutdown();
    assertTrue(callers.awaitTermination(10, TimeUnit.SECONDS), "every cancelled waiter returned");
    for (Lease holder : holders) {
      assertTrue(holder.isValid(), "held throughout: no waiter could have won");
      holder.release();
    }
    awaitGivenBack(waiters, healthy());
    for (int i = 0; i < 20; i++) {
      assertEquals(
          0,
          redis.nodesWithKey(key() + ":" + i),
          "no cancelled waiter holds resource " + i + " on a healthy node");
    }
    tenPlainAttemptsWin(waiters);
    nodes.node(3).resume();
    nodes.node(4).resume();
    awaitGivenBack(waiters, nodes.all());
    awaitGivenBack(redlock, nodes.all());
    await() // late SETs rolled back on thaw
        .atMost(GIVEN_BACK)
        .until(
            () ->
                java.util.stream.IntStream.range(0, 20)
                    .allMatch(i -> redis.nodesWithKey(key() + ":" + i) == 0));
  }

  /**
   * An interrupt while the vote waits for replies: three of five nodes are frozen, so the vote
   * waits for them; the two that said yes must be rolled back at once, the frozen three once they
   * thaw and run the SET they read, and no connection may stay in use.
   */
  @Test
  void anInterruptDuringTheVoteRollsBackEverywhereAndGivesEveryConnectionBack() throws Exception {
    Redlock redlock =
        client(config().maxConnectionsPerNode(2).nodeTimeout(Duration.ofSeconds(2)).build());
    redlock.tryAcquire(resource(), TTL).orElseThrow().release(); // connections made, nodes read
    awaitGivenBack(redlock, nodes.all());
    List<RedisNode> frozen = nodes.all().subList(2, 5);
    frozen.forEach(RedisNode::pause);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<Boolean> flagKept = new AtomicReference<>();
    Thread caller =
        new Thread(
            () -> {
              try {
                redlock.tryAcquire(resource(), TTL);
              } catch (RuntimeException e) {
                thrown.set(e);
              }
              flagKept.set(Thread.currentThread().isInterrupted());
            });
    caller.start();
    // The two live nodes hold our key: the SET went out and the vote waits for the frozen three.
    await().atMost(NO_HANG).until(() -> nodesWithKey() == 2);
    caller.interrupt();
    caller.join(TimeUnit.SECONDS.toMillis(10));
    assertFalse(caller.isAlive(), "the interrupted vote returned");
    assertTrue(thrown.get() instanceof RedlockException, "interrupted, said so: " + thrown.get());
    assertTrue(flagKept.get(), "the interrupt flag is set again");
    await().atMost(GIVEN_BACK).until(() -> nodesWithKey() == 0); // rolled back on the live two
    awaitGivenBack(redlock, nodes.all().subList(0, 2));
    frozen.forEach(RedisNode::resume);
    awaitGivenBack(redlock, nodes.all());
    await().atMost(GIVEN_BACK).until(() -> nodesWithKey() == 0); // and on the three that thawed
  }

  /** A holder whose thread was interrupted still releases, and keeps its interrupt. */
  @Test
  void anInterruptedHolderStillExtendsNothingAndReleasesEverything() throws Exception {
    Redlock redlock = smallPools();
    Lease lease = redlock.acquire(resource(), TTL, Duration.ofSeconds(5));
    Thread.currentThread().interrupt();
    try {
      assertFalse(lease.extend(TTL), "an interrupted extend reports failure");
      assertTrue(Thread.currentThread().isInterrupted(), "extend kept the flag");
      assertTrue(lease.isValid(), "and the lease its validity");
      lease.release();
      assertTrue(Thread.currentThread().isInterrupted(), "release kept the flag");
      assertThrows(RedlockException.class, () -> redlock.tryAcquire(resource(), TTL));
    } finally {
      Thread.interrupted();
    }
    await().atMost(GIVEN_BACK).until(() -> nodesWithKey() == 0);
    awaitGivenBack(redlock, nodes.all());
    tenPlainAttemptsWin(redlock);
  }
}
