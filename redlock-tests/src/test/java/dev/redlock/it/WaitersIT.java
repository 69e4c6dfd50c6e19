package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockEvent;
import dev.redlock.Redlock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Waiters that are told (issue 15, item 4): a release is announced by every node it frees, and a
 * client waiting for that resource asks again at once instead of at its next poll; of one client's
 * threads waiting for one resource, only the first asks the nodes.
 */
class WaitersIT extends RealNodesTest {
  static final Duration TTL = Duration.ofSeconds(30);

  @Override
  int nodeCount() {
    return 3;
  }

  /**
   * How long the slow poller waits between its polls, and at most: twice the bound the tests wait
   * for what an announcement does at once.
   */
  private static final Duration SLOW = NO_HANG.multipliedBy(2);

  /** A client that would not ask again by itself within {@link #SLOW}: only an announcement can. */
  private Redlock slowPoller(AtomicInteger attempts) {
    return client(
        config()
            .retryDelay(SLOW)
            .retryJitter(Duration.ZERO)
            .listener(
                event -> {
                  if (event.kind() == LockEvent.Kind.ATTEMPT) {
                    attempts.incrementAndGet();
                  }
                })
            .build());
  }

  @Test
  void aReleaseWakesAWaiterLongBeforeItsNextPoll() throws Exception {
    Redlock a = client(config().build());
    AtomicInteger attempts = new AtomicInteger();
    Redlock b = slowPoller(attempts);
    Lease held = a.acquire(resource, TTL, NO_HANG);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Lease> waiting = pool.submit(() -> b.acquire(resource, TTL, SLOW));
      await("B tried once and waits").atMost(NO_HANG).until(() -> attempts.get() == 1);
      // B subscribes as it starts waiting; give that a moment, bounded, by waiting for the nodes
      // to see its subscription (one per node: PUBSUB NUMSUB of the key).
      await("B's subscription reached every node")
          .atMost(NO_HANG)
          .until(() -> nodes.all().stream().allMatch(n -> Admin.subscribers(n, key()) == 1));
      held.release();
      Lease lease =
          waiting.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS); // polling: not before SLOW
      assertTrue(lease.isValid());
      assertEquals(2, attempts.get(), "one attempt, then one more when the release was announced");
      lease.release();
    } finally {
      pool.shutdownNow();
    }
    await("the subscription ends with the last waiter")
        .atMost(NO_HANG)
        .until(() -> nodes.all().stream().allMatch(n -> Admin.subscribers(n, key()) == 0));
  }

  @Test
  void ofOneClientsThreadsWaitingForOneResourceOnlyTheFirstPolls() throws Exception {
    Redlock a = client(config().build());
    AtomicInteger attempts = new AtomicInteger();
    Redlock b =
        client(
            config()
                .retryDelay(Duration.ofMillis(50))
                .retryJitter(Duration.ZERO)
                .listener(
                    event -> {
                      if (event.kind() == LockEvent.Kind.ATTEMPT) {
                        attempts.incrementAndGet();
                      }
                    })
                .build());
    Lease held = a.acquire(resource, TTL, NO_HANG);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<?>> waiters = new ArrayList<>();
    try {
      for (int t = 0; t < 4; t++) {
        waiters.add(
            pool.submit(
                () -> {
                  b.acquire(resource, TTL, NO_HANG).release();
                  return null;
                }));
      }
      long start = System.nanoTime();
      await().atMost(NO_HANG).until(() -> attempts.get() >= 4); // each thread tried once
      // For a second, four threads that each polled every 50 ms would make about 80 attempts;
      // one that polls for all of them makes about 20 (the bound leaves room for a slow machine,
      // which only polls less).
      await("a second of waiting")
          .atMost(NO_HANG)
          .until(() -> System.nanoTime() - start >= TimeUnit.SECONDS.toNanos(1));
      int during = attempts.get();
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(
          during <= 4 + 2 * (millis / 50 + 1),
          during + " attempts in " + millis + " ms: more than one thread polls");
      held.release();
      for (Future<?> f : waiters) {
        f.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS); // every one gets its turn
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void closingTheClientEndsItsWaitersAtOnce() throws Exception {
    Redlock a = client(config().build());
    AtomicInteger attempts = new AtomicInteger();
    Redlock b = slowPoller(attempts);
    Lease held = a.acquire(resource, TTL, NO_HANG);
    CompletableFuture<Object> outcome = new CompletableFuture<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                outcome.complete(b.acquire(resource, TTL, SLOW));
              } catch (Throwable e) {
                outcome.complete(e);
              }
            });
    waiter.start();
    await().atMost(NO_HANG).until(() -> attempts.get() == 1);
    b.close();
    Object result = outcome.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS); // not SLOW later
    assertInstanceOf(IllegalStateException.class, result, String.valueOf(result));
    await("the closed client's announcement threads and connections are gone")
        .atMost(NO_HANG)
        .until(
            () ->
                Thread.getAllStackTraces().keySet().stream()
                        .noneMatch(t -> t.getName().startsWith("redlock-notices-"))
                    && nodes.all().stream().allMatch(n -> Admin.subscribers(n, key()) == 0));
    held.release();
    waiter.join(NO_HANG.toMillis());
  }
}
