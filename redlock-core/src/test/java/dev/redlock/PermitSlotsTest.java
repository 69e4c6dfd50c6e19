package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.internal.Ticker;
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
 * LeaseContract, and FaultSuitesIT suite 9): a full semaphore is asked each permit once, a round
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

  @Test
  void aRoundStopsAtTheFirstAttemptThatIsNotContention() {
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

  @Test
  void onlyAPermitsResourceNamesASemaphoresLine() {
    assertEquals(new PermitSlots.WaitingLine("jobs"), PermitSlots.waitingLineOf("jobs@permit:3"));
    assertNull(PermitSlots.waitingLineOf("jobs"));
    assertNull(PermitSlots.waitingLineOf("@permit:3"));
    for (String other : List.of("jobs", "[jobs@permit:0]")) {
      assertTrue(!new PermitSlots.WaitingLine("jobs").equals(other), "a line is never a name");
    }
  }
}
