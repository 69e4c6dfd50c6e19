package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.testkit.CommandStats;
import dev.redlock.testkit.RedisNode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Leases that stay alive while work runs, on a few threads, and nothing renewed after release or
 * close; on three real nodes ({@link LeaseLossIT}: leases that say loudly when they are lost).
 */
class RenewalIT extends Renewals {
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
