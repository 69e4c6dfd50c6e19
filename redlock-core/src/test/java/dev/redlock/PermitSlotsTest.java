package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.config.RedlockConfig;
import dev.redlock.timing.Ticker;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a semaphore's round costs, over fake nodes (its safety is the real nodes' contract,
 * LeaseContract, and ShapeSuitesIT suite 9): a full semaphore is asked each permit once, a round
 * stops at the first attempt that is not contention, rounds start at varying permits, and only a
 * permit's own resource names its semaphore's waiting line.
 */
class PermitSlotsTest {
  private static final Duration TTL = Duration.ofSeconds(30);

  private final FakeCluster cluster = new FakeCluster();
  private final AtomicInteger attempts = new AtomicInteger();

  @AfterEach
  void close() {
    cluster.close();
  }

  private Redlock start() {
    return cluster.start(
        3,
        RedlockConfig.builder()
            .nodeTimeout(Duration.ofMillis(100))
            .listener(
                e -> {
                  if (e.kind() == LockEvent.Kind.ATTEMPT) {
                    attempts.incrementAndGet();
                  }
                }),
        Ticker.SYSTEM);
  }

  @Test
  void aFullSemaphoreIsAskedEachPermitOnceARound() {
    Redlock redlock = start();
    Semaphore semaphore = redlock.semaphore("full", 8);
    for (int i = 0; i < 8; i++) {
      semaphore.tryAcquire(TTL).orElseThrow();
    }
    attempts.set(0);
    assertEquals(Optional.empty(), semaphore.tryAcquire(TTL));
    assertEquals(8, attempts.get(), "one attempt per permit, no more");
  }

  /** Nodes out enough to bar a quorum by themselves: the other permits are not asked. */
  @Test
  void aRoundStopsAtAnOutageThatBarsAQuorum() {
    Redlock redlock = start();
    Semaphore semaphore = redlock.semaphore("down", 8);
    cluster.node(0).mode = FakeNode.Mode.DOWN;
    cluster.node(1).mode = FakeNode.Mode.DOWN;
    attempts.set(0);
    LockUnavailableException e =
        assertThrows(LockUnavailableException.class, () -> semaphore.tryAcquire(TTL));
    assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
    assertEquals("down", e.resource(), "the semaphore is named");
    assertTrue(e.getMessage().contains("down@permit:"), "and the permit that failed: " + e);
    assertEquals(1, attempts.get(), "the other permits live on the same nodes: not asked");
  }

  @Test
  void roundsStartAtVaryingPermits() {
    Redlock redlock = start();
    Semaphore semaphore = redlock.semaphore("spread", 4);
    Set<String> first = new HashSet<>();
    for (int i = 0; i < 40; i++) {
      Lease lease = semaphore.tryAcquire(TTL).orElseThrow();
      first.add(lease.resource());
      lease.release();
    }
    assertTrue(first.size() > 1, "every round began at " + first);
  }

  /**
   * A permit blocked by another client's refusals plus one node that is out is not an outage of the
   * semaphore: the round goes on to the free permit (review finding: it used to stop and throw).
   * Planted: stopping at the first attempt that is not contention throws about every other time
   * here.
   */
  @Test
  void aPermitBlockedByRefusalsAndOneNodeOutDoesNotEndTheRound() {
    Redlock redlock =
        cluster.start(
            5, RedlockConfig.builder().nodeTimeout(Duration.ofMillis(100)), Ticker.SYSTEM);
    Redlock other = cluster.client(RedlockConfig.builder().nodeTimeout(Duration.ofMillis(100)));
    cluster.node(3).mode = FakeNode.Mode.DOWN;
    cluster.node(4).mode = FakeNode.Mode.DOWN;
    other.semaphore("split", 1).tryAcquire(TTL).orElseThrow(); // permit 0 on nodes 0, 1, 2
    cluster.node(3).mode = FakeNode.Mode.UP;
    cluster.node(4).mode = FakeNode.Mode.UP;
    cluster.node(2).mode = FakeNode.Mode.DOWN; // permit 0: 2 refusals, 1 out, 2 yes
    Semaphore semaphore = redlock.semaphore("split", 2);
    for (int i = 0; i < 20; i++) {
      Lease lease = semaphore.tryAcquire(TTL).orElseThrow();
      assertEquals("split@permit:1", lease.resource());
      lease.release();
    }
  }

  /**
   * One service's waiters for one semaphore stand in one line per number of permits: a waiter that
   * may take permit 2 does not wait behind one that may only take 0 and 1 (review finding; a
   * semaphore grown in a rolling change). Retry pauses are a minute, so a grant within seconds
   * means it never waited. Planted: one line per name keeps the second waiter parked.
   */
  @Test
  void aWaiterOfMorePermitsDoesNotWaitBehindOneOfFewer() throws Exception {
    Redlock redlock =
        cluster.start(
            3,
            RedlockConfig.builder()
                .nodeTimeout(Duration.ofMillis(100))
                .retryDelay(Duration.ofMinutes(1))
                .retryJitter(Duration.ZERO),
            Ticker.SYSTEM);
    Semaphore two = redlock.semaphore("mixed", 2);
    Semaphore five = redlock.semaphore("mixed", 5);
    two.tryAcquire(TTL).orElseThrow();
    two.tryAcquire(TTL).orElseThrow();
    java.util.concurrent.atomic.AtomicReference<Object> small =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread waiting =
        new Thread(
            () -> {
              try {
                small.set(two.acquire(TTL, Duration.ofMinutes(2)));
              } catch (Throwable e) {
                small.set(e);
              }
            });
    waiting.start();
    try {
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> java.util.concurrent.locks.LockSupport.getBlocker(waiting) instanceof Waiters);
      java.util.concurrent.CompletableFuture<Lease> big =
          java.util.concurrent.CompletableFuture.supplyAsync(
              () -> {
                try {
                  return five.acquire(TTL, Duration.ofMinutes(2));
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              });
      Lease lease = big.get(10, java.util.concurrent.TimeUnit.SECONDS);
      assertTrue(lease.resource().compareTo("mixed@permit:2") >= 0, lease.resource());
      assertEquals(null, small.get(), "the two-permit waiter still waits");
    } finally {
      waiting.interrupt();
      waiting.join(10_000);
    }
  }

  @Test
  void aPermitsReleaseServesTheLinesThatMayTakeIt() {
    assertTrue(PermitSlots.serves("jobs@permit:3", new PermitSlots.WaitingLine("jobs", 4)));
    assertTrue(!PermitSlots.serves("jobs@permit:3", new PermitSlots.WaitingLine("jobs", 3)));
    assertTrue(!PermitSlots.serves("jobs@permit:3", new PermitSlots.WaitingLine("job", 9)));
    assertTrue(!PermitSlots.serves("jobsx@permit:0", new PermitSlots.WaitingLine("jobs", 9)));
    assertTrue(!PermitSlots.serves("jobs", new PermitSlots.WaitingLine("jobs", 9)));
    assertTrue(!PermitSlots.serves("jobs@permit:3", "jobs"), "a resource's line");
    assertTrue(PermitSlots.isPermit("jobs@permit:0"));
    assertTrue(!PermitSlots.isPermit("@permit:0") && !PermitSlots.isPermit("jobs"));
    for (String other : List.of("jobs", "[jobs@permit:0]")) {
      assertTrue(!new PermitSlots.WaitingLine("jobs", 1).equals(other), "a line is never a name");
    }
  }
}
