package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.Redlock;
import dev.redlock.testkit.RedisNode;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Leases that say loudly when they are lost, and how soon: loss callbacks that block, frozen
 * majorities, hung renewals, maxHold; on three real nodes.
 */
class LeaseLossIT extends Renewals {
  /**
   * Takes {@code count} leases (no renewal: they expire after {@link #TTL}) whose onLost callback
   * counts {@code blocking} down, then blocks until {@code unblock} (30 s at most).
   */
  void slowLosses(Redlock redlock, int count, CountDownLatch blocking, CountDownLatch unblock) {
    for (int i = 0; i < count; i++) {
      redlock
          .tryAcquire(resource() + ":slow" + i, TTL)
          .orElseThrow()
          .onLost(
              loss -> {
                blocking.countDown();
                try {
                  unblock.await(30, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
    }
  }

  /**
   * Two onLost callbacks that block (as many as there are timer threads) hold up neither another
   * lease's renewal nor another lease's loss signal: user code runs on callback threads. Before,
   * the callbacks ran on the two timer threads, the kept-alive lease was never renewed and the
   * doomed lease's loss never told.
   */
  @Test
  void slowLossCallbacksHoldUpNoOtherLeasesRenewalOrLoss() throws Exception {
    Redlock redlock = client();
    CountDownLatch unblock = new CountDownLatch(1);
    CountDownLatch blocking = new CountDownLatch(2);
    try {
      slowLosses(redlock, 2, blocking, unblock);
      assertTrue(blocking.await(10, java.util.concurrent.TimeUnit.SECONDS), "both callbacks run");
      Lease kept = redlock.tryAcquire(resource() + ":kept", TTL).orElseThrow().keepAlive();
      Lease doomed = redlock.tryAcquire(resource() + ":doomed", TTL).orElseThrow();
      CompletableFuture<LeaseLostException> told = new CompletableFuture<>();
      doomed.onLost(told::complete);
      assertNotNull(
          told.get(TTL.multipliedBy(3).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS),
          "the doomed lease's loss was told while the slow callbacks blocked");
      await().during(TTL.multipliedBy(3)).atMost(NO_HANG).until(kept::isValid);
      kept.release();
    } finally {
      unblock.countDown();
    }
  }

  /**
   * Every callback thread blocked by slow onLost callbacks, and then a withLock task's lease is
   * lost: the task is still interrupted at once (the interrupt is not user code and never waits
   * behind callbacks), so it cannot go on working on a lock it no longer holds.
   */
  @Test
  void aTaskIsInterruptedOnLossEvenWhenEveryCallbackThreadIsBlocked() throws Exception {
    Redlock redlock = client();
    CountDownLatch unblock = new CountDownLatch(1);
    int blockers = 9; // more than the callback threads
    CountDownLatch blocking = new CountDownLatch(8);
    try {
      slowLosses(redlock, blockers, blocking, unblock);
      assertTrue(
          blocking.await(10, java.util.concurrent.TimeUnit.SECONDS),
          "every callback thread is blocked");
      AtomicBoolean interrupted = new AtomicBoolean();
      CompletableFuture<Void> running = new CompletableFuture<>();
      CompletableFuture<Void> task =
          CompletableFuture.runAsync(
              () -> {
                try {
                  redlock.withLock(
                      resource(),
                      TTL,
                      Duration.ofSeconds(5),
                      lease -> {
                        running.complete(null);
                        try {
                          Thread.sleep(NO_HANG.toMillis());
                        } catch (InterruptedException e) {
                          interrupted.set(true);
                        }
                        return null;
                      });
                } catch (Exception e) {
                  // lost: what withLock throws after the task ends
                }
              });
      running.get(10, java.util.concurrent.TimeUnit.SECONDS);
      nodes.node(1).pause(); // two of three nodes silent: the next renewal fails
      nodes.node(2).pause();
      task.get(TTL.multipliedBy(4).toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      assertTrue(interrupted.get(), "the task was interrupted when its lease was lost");
    } finally {
      unblock.countDown();
      nodes.node(1).resume();
      nodes.node(2).resume();
    }
  }

  @Test
  void aFrozenMajoritySignalsTheLossOnceInterruptsTheTaskAndLetsOthersInAfterwards()
      throws Exception {
    Redlock holder = client();
    AtomicInteger lossSignals = new AtomicInteger();
    AtomicReference<LeaseLostException> loss = new AtomicReference<>();
    AtomicLong lastValidUntil = new AtomicLong();
    CountDownLatch taskStarted = new CountDownLatch(1);
    AtomicLong frozenAt = new AtomicLong();
    AtomicLong lostAt = new AtomicLong();
    ExecutorService runner = Executors.newSingleThreadExecutor();
    try {
      Future<Object> task =
          runner.submit(
              () ->
                  withTheLock(
                      holder,
                      lease -> {
                        lease.onLost(
                            e -> {
                              lostAt.set(System.nanoTime());
                              loss.set(e);
                              lossSignals.incrementAndGet();
                            });
                        taskStarted.countDown();
                        new CountDownLatch(1).await(); // blocking work that only an interrupt ends
                        return "never";
                      }));
      assertTrue(taskStarted.await(10, java.util.concurrent.TimeUnit.SECONDS));
      nodes.node(0).pause();
      nodes.node(1).pause();
      frozenAt.set(System.nanoTime());

      java.util.concurrent.ExecutionException e =
          assertThrows(
              java.util.concurrent.ExecutionException.class,
              () -> task.get(NO_HANG.toSeconds(), java.util.concurrent.TimeUnit.SECONDS));
      assertTrue(
          e.getCause() instanceof InterruptedException,
          "the task's thread was interrupted: " + e.getCause());
      assertEquals(
          1, e.getCause().getSuppressed().length, "the loss rides along with the task's exception");
      // The interrupt comes at once; onLost runs on a callback thread, maybe a moment later.
      await().atMost(NO_HANG).until(() -> lossSignals.get() >= 1);
      assertSame(loss.get(), e.getCause().getSuppressed()[0]);
      assertEquals(1, lossSignals.get(), "onLost ran once");
      assertTrue(
          loss.get().reason() == LeaseLostException.Reason.RENEWAL_FAILED
              || loss.get().reason() == LeaseLostException.Reason.EXPIRED,
          loss.get().getMessage());
      // The loss is signalled within one ttl of the freeze (validity from the last renewal ends
      // before then), plus scheduling slack for a loaded machine.
      long signalledAfter = lostAt.get() - frozenAt.get();
      assertTrue(
          signalledAfter < TTL.plusMillis(500).toNanos(),
          "loss signalled " + signalledAfter / 1_000_000 + " ms after the freeze");
    } finally {
      runner.shutdownNow();
    }
    nodes.node(0).resume();
    nodes.node(1).resume();
    Redlock other = client();
    Lease next =
        await()
            .atMost(NO_HANG)
            .pollInterval(Duration.ofMillis(50))
            .until(
                () -> other.tryAcquire(resource(), Duration.ofSeconds(30)).orElse(null),
                lease -> lease != null);
    // Let every delayed request of the first holder (its release, renewals queued at the frozen
    // nodes) reach the nodes; none may touch the new owner's key.
    await()
        .during(Duration.ofMillis(500))
        .atMost(NO_HANG)
        .until(() -> next.isValid() && holdsQuorum(next));
    next.release();
  }

  private boolean holdsQuorum(Lease lease) {
    long withKey = nodes.all().stream().filter(node -> Admin.get(node, key()) != null).count();
    return withKey >= 2
        && nodes.all().stream()
                .map(node -> Admin.get(node, key()))
                .filter(v -> v != null)
                .distinct()
                .count()
            == 1;
  }

  @Test
  void aRenewalThatHangsOnFrozenNodesStillSignalsTheLossByTheEndOfValidity() {
    // A long node timeout: renewals sent to frozen nodes wait for it.
    Redlock redlock =
        client(config().nodeTimeout(Duration.ofMillis(400)).renewalFraction(0.2).build());
    Duration ttl =
        Duration.ofMillis(2500); // renewal every 500 ms, each may wait 400 ms on a frozen node
    Lease lease = redlock.tryAcquire(resource(), ttl).orElseThrow().keepAlive();
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    lease.onLost(lost::complete);
    nodes.all().forEach(RedisNode::pause);
    long frozenAt = System.nanoTime();
    LeaseLostException loss = assertTimeoutPreemptively(NO_HANG, () -> lost.get());
    long after = System.nanoTime() - frozenAt;
    assertFalse(lease.isValid());
    assertThrows(LeaseLostException.class, lease::checkValid);
    assertTrue(
        after < ttl.plusMillis(500).toNanos(),
        "signalled " + after / 1_000_000 + " ms after the freeze: " + loss.getMessage());
  }

  @Test
  void aTaskOutlivingMaxHoldLosesItsLeaseByPolicy() throws Exception {
    Redlock redlock = client(config().maxHold(Duration.ofMillis(1500)).build());
    AtomicReference<LeaseLostException> loss = new AtomicReference<>();
    InterruptedException e =
        assertThrows(
            InterruptedException.class,
            () ->
                withTheLock(
                    redlock,
                    lease -> {
                      lease.onLost(loss::set);
                      new CountDownLatch(1).await(); // a hung job
                      return null;
                    }));
    // The task is interrupted at once; the onLost callback runs on a callback thread, maybe later.
    await().atMost(NO_HANG).until(() -> loss.get() != null);
    assertEquals(LeaseLostException.Reason.MAX_HOLD_REACHED, loss.get().reason());
    assertTrue(loss.get().getMessage().contains("maxHold"), loss.get().getMessage());
    assertSame(loss.get(), e.getSuppressed()[0]);
  }
}
