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
import dev.redlock.LeaseTask;
import dev.redlock.Redlock;
import dev.redlock.testkit.CommandStats;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Leases that stay alive while work runs, and say loudly when they are lost; on three real nodes.
 */
class RenewalIT extends RealNodesTest {
  RenewalIT() {
    super(RedisFixture.nodes(3));
  }

  /**
   * Short enough that several renewals happen in a test, long enough to be robust on a loaded
   * machine.
   */
  static final Duration TTL = Duration.ofMillis(900);

  @Override
  public Duration nodeTimeout() {
    return Duration.ofMillis(100);
  }

  /** {@code holder.withLock} on this test's resource with {@link #TTL}, without waiting. */
  <T, E extends Exception> T withTheLock(Redlock holder, LeaseTask<T, E> task)
      throws E, InterruptedException {
    return holder.withLock(resource(), TTL, Duration.ZERO, task);
  }

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
  void aTaskRunningThreeTtlsKeepsTheLockThroughout() throws Exception {
    Redlock holder = client();
    Redlock poller = client();
    AtomicBoolean pollerWonWhileTaskRan = new AtomicBoolean();
    AtomicBoolean taskRunning = new AtomicBoolean();
    AtomicInteger pollsDuringTask = new AtomicInteger();
    long threeTtls = TTL.multipliedBy(3).toNanos();

    String result =
        withTheLock(
            holder,
            lease -> {
              taskRunning.set(true);
              long began = System.nanoTime();
              // Another client polls the resource() for more than three ttls while the task runs.
              await()
                  .atMost(NO_HANG)
                  .pollInterval(Duration.ofMillis(25))
                  .until(
                      () -> {
                        poller
                            .tryAcquire(resource(), TTL)
                            .ifPresent(
                                stolen -> {
                                  pollerWonWhileTaskRan.set(true);
                                  stolen.release();
                                });
                        pollsDuringTask.incrementAndGet();
                        return System.nanoTime() - began > threeTtls;
                      });
              lease.checkValid();
              assertTrue(lease.remainingValidity().compareTo(Duration.ZERO) > 0);
              taskRunning.set(false);
              return "settled";
            });

    assertEquals("settled", result);
    assertFalse(pollerWonWhileTaskRan.get(), "another client won while the renewed lease was held");
    assertTrue(pollsDuringTask.get() > 10, "the poller really polled: " + pollsDuringTask.get());
    // Released at the end of withLock: the poller wins at once.
    assertTrue(poller.tryAcquire(resource(), TTL).isPresent(), "free as soon as the task ended");
  }

  /**
   * Two of three nodes frozen for longer than a renewal interval, and shorter than what is left of
   * the validity: the renewal that falls due meanwhile misses the quorum, the lease keeps its
   * validity and the renewal is tried again until the nodes answer. The lease lives on, and no loss
   * is signalled. Planted (a round that misses the quorum loses the lease): lost.
   */
  @Test
  void aMajorityFrozenForOneRenewalRoundKeepsTheLease() throws Exception {
    Duration ttl = Duration.ofSeconds(3); // a renewal every second; validity left >= 1.9 s
    Lease lease = client().acquire(resource(), ttl, NO_HANG).keepAlive();
    AtomicInteger losses = new AtomicInteger();
    lease.onLost(e -> losses.incrementAndGet());
    nodes.node(0).pause();
    nodes.node(1).pause();
    try {
      long until = System.nanoTime() + Duration.ofMillis(1200).toNanos(); // past one interval
      await().atMost(NO_HANG).until(() -> System.nanoTime() - until > 0);
    } finally {
      nodes.node(0).resume();
      nodes.node(1).resume();
    }
    await()
        .during(ttl.multipliedBy(2))
        .atMost(NO_HANG)
        .until(() -> lease.isValid() && losses.get() == 0);
    lease.release();
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
  void aTaskThatThrowsReleasesTheLockAndTheExceptionReachesTheCallerUnchanged() {
    Redlock holder = client();
    IOException thrown = new IOException("payment gateway said no");
    IOException caught =
        assertThrows(
            IOException.class,
            () ->
                withTheLock(
                    holder,
                    lease -> {
                      throw thrown;
                    }));
    assertSame(thrown, caught);
    assertEquals(0, caught.getSuppressed().length, "no loss to report");
    assertTrue(client().tryAcquire(resource(), TTL).isPresent(), "released");
  }

  @Test
  void noRenewalAfterReleaseAndNoWatchdogThreadsAfterClose() {
    Redlock redlock = Redlock.create(config().build());
    Lease lease = redlock.tryAcquire(resource(), TTL).orElseThrow().keepAlive();
    long afterGrant = extendCalls();
    await()
        .atMost(NO_HANG)
        .until(() -> extendCalls() >= afterGrant + 3); // it renews: at least one round on 3 nodes
    lease.release();
    long after = extendCalls();
    await()
        .during(TTL)
        .atMost(NO_HANG)
        .until(() -> extendCalls() == after); // a ttl later: not one more
    redlock.close();
    await()
        .atMost(NO_HANG)
        .untilAsserted(
            () ->
                assertEquals(
                    List.of(), // named, with what they run, so a failure says whose they are
                    Thread.getAllStackTraces().entrySet().stream()
                        .filter(
                            e ->
                                e.getKey().getName().startsWith("redlock-watchdog-")
                                    || e.getKey().getName().startsWith("redlock-io-")
                                    || e.getKey().getName().startsWith("redlock-renewal-"))
                        .map(e -> e.getKey().getName() + " " + List.of(e.getValue()))
                        .toList()));
  }

  /**
   * How many scripts the nodes ran (extends and releases are scripts), counting successful calls
   * only.
   */
  private long extendCalls() {
    return nodes.all().stream()
        .mapToLong(node -> CommandStats.calls(node, c -> c.equals("evalsha") || c.equals("eval")))
        .sum();
  }

  /**
   * Renewals go out pipelined; a node that lost its script cache (a restart, SCRIPT FLUSH) answers
   * them NOSCRIPT, and the pipeline sends them again with the script's source: the lease lives on.
   */
  @Test
  void pipelinedRenewalsSurviveAScriptFlush() {
    Redlock redlock = client(config().build());
    Duration ttl = Duration.ofSeconds(1);
    Lease lease = redlock.tryAcquire(resource(), ttl).orElseThrow().keepAlive();
    long evalsBefore = evals();
    for (RedisNode node : nodes.all()) {
      try (redis.clients.jedis.Jedis jedis = Admin.on(node)) {
        jedis.scriptFlush();
      }
    }
    await(
            "valid for three ttls after the flush: every renewal since was sent again with its source")
        .during(ttl.multipliedBy(3))
        .atMost(NO_HANG)
        .until(lease::isValid);
    assertTrue(evals() > evalsBefore, "the scripts were sent again with their source (EVAL)");
    lease.release();
  }

  private long evals() {
    return nodes.all().stream()
        .mapToLong(node -> CommandStats.calls(node, c -> c.equals("eval")))
        .sum();
  }

  @Test
  void thousandsOfRenewedLeasesShareAFewThreads() throws Exception {
    Redlock redlock = client(config().nodeTimeout(Duration.ofMillis(500)).build());
    Duration ttl = Duration.ofSeconds(6);
    List<Lease> leases = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      leases.add(redlock.tryAcquire(resource() + ":" + i, ttl).orElseThrow().keepAlive());
    }
    long threadsAt200 = threadsOutsideTheIoPool();
    for (int i = 200; i < 2000; i++) {
      leases.add(redlock.tryAcquire(resource() + ":" + i, ttl).orElseThrow().keepAlive());
    }
    // A ttl after the last grant, a lease that was never renewed would have expired.
    await("every lease still valid a ttl after the last grant")
        .pollDelay(ttl.plusMillis(200))
        .atMost(ttl.multipliedBy(3))
        .until(() -> leases.stream().allMatch(Lease::isValid));
    // Every lease renewed at least once by now, on the library's fixed threads: two timers and a
    // pipeline drain per node, no renewal threads (those are for stores that can only wait). The
    // I/O pool is left out of the count: the acquisitions' hand-offs of slow replies use it, more
    // on a loaded machine, bounded by nodes × maxConnectionsPerNode whatever the lease count.
    Map<String, Long> named = libraryThreadsByName();
    assertTrue(named.getOrDefault("redlock-watchdog-", 0L) <= 2, named.toString());
    assertTrue(named.getOrDefault("redlock-pipeline-", 0L) <= nodes.all().size(), named.toString());
    assertEquals(0L, named.getOrDefault("redlock-renewal-", 0L), named.toString());
    long threadsAt2000 = threadsOutsideTheIoPool();
    assertTrue(
        threadsAt2000 - threadsAt200 < 20,
        "threads outside the I/O pool grew from "
            + threadsAt200
            + " to "
            + threadsAt2000
            + ": "
            + named);
    leases.forEach(Lease::release);
  }

  private static long threadsOutsideTheIoPool() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> !t.getName().startsWith("redlock-io-"))
        .count();
  }

  /** The library's live threads, counted by the prefix of their name. */
  private static Map<String, Long> libraryThreadsByName() {
    return Thread.getAllStackTraces().keySet().stream()
        .map(Thread::getName)
        .filter(name -> name.startsWith("redlock-"))
        .collect(
            Collectors.groupingBy(
                name -> name.substring(0, name.indexOf('-', "redlock-".length()) + 1),
                TreeMap::new,
                Collectors.counting()));
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

  @Test
  void badInputIsRejectedBeforeAnythingIsTaken() {
    Redlock redlock = client();
    assertEquals(
        "task must not be null",
        assertThrows(NullPointerException.class, () -> withTheLock(redlock, null)).getMessage());
    IllegalArgumentException tooShort =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                redlock.withLock(resource(), Duration.ofMillis(250), Duration.ZERO, lease -> "x"));
    assertTrue(tooShort.getMessage().startsWith("ttl too short to renew"), tooShort.getMessage());
    assertEquals(
        0,
        nodes.all().stream().filter(node -> Admin.get(node, key()) != null).count(),
        "nothing was taken");
    Lease plain = redlock.tryAcquire(resource(), Duration.ofMillis(250)).orElseThrow();
    assertThrows(IllegalArgumentException.class, plain::keepAlive);
    plain.release();
    assertThrows(IllegalStateException.class, plain::keepAlive);
    assertThrows(IllegalStateException.class, plain::checkValid);
  }
}
