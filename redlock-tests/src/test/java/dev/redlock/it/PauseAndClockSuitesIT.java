package dev.redlock.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.History;
import dev.redlock.testkit.History.Outcome;
import dev.redlock.testkit.HistoryChecker;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.Stall;
import dev.redlock.testkit.Workload;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Suites 4 and 5 of {@code docs/faults.md}: a holder paused past its ttl, clocks running fast on a
 * majority ({@link FaultSuites}: the settings, the seed and the report).
 */
@TestMethodOrder(MethodOrderer.MethodName.class)
class PauseAndClockSuitesIT extends FaultSuites {
  // ---- 4. Holder pause past its ttl: the lock moves on, fencing stops the stale write.

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void suite4AHolderPausedPastItsTtl(boolean fencing) throws Exception {
    try (FaultyNodes nodes = start(RedisFixture.nodes(5));
        Redlock a =
            Redlock.create(settings(RedlockConfig.builder().nodes(nodes.uris("a"))).build());
        Redlock b =
            Redlock.create(settings(RedlockConfig.builder().nodes(nodes.uris("b"))).build())) {
      History history = new History();
      AtomicLong newestAccepted = new AtomicLong();
      String resource = "faults:paused";
      Lease stalled = a.acquire(resource, Duration.ofMillis(500), NO_HANG);
      history.granted("a", stalled);
      assertTrue(stalled.isValid());
      history.foundValid("a", stalled);
      // A checked its lease; now it stalls (a GC pause) until B holds the lock and has written.
      Stall.pastValidity(
          stalled,
          () -> {
            Optional<Lease> next = b.tryAcquire(resource, Duration.ofSeconds(2));
            next.ifPresent(
                lease -> {
                  history.granted("b", lease);
                  write(history, "b", lease, newestAccepted, fencing);
                  history.released("b", lease);
                  lease.release();
                });
            return next.isPresent();
          },
          NO_HANG.toMillis());
      boolean accepted = write(history, "a", stalled, newestAccepted, fencing);
      List<String> violations = HistoryChecker.violations(history);
      report.add(
          "4 holder pause",
          "holder stalls past its ttl, then writes; fencing " + (fencing ? "on" : "OFF"),
          fencing
              ? "lock moves on, stale write refused, 0 violations"
              : "the checker finds the stale write",
          violations.size(),
          "stale write " + (accepted ? "accepted" : "refused"));
      if (fencing) {
        assertFalse(accepted, "the fenced store refuses the older token");
        assertEquals(List.of(), violations);
      } else {
        assertTrue(accepted);
        assertEquals(1, violations.size(), violations.toString());
        assertTrue(violations.get(0).startsWith("stale write accepted: "), violations.get(0));
      }
    }
  }

  /** A guarded write to a register that refuses tokens older than the newest it accepted. */
  private static boolean write(
      History history, String client, Lease lease, AtomicLong newest, boolean fencing) {
    long before = newest.getAndAccumulate(lease.fencingToken(), Math::max);
    boolean accepted = !fencing || lease.fencingToken() >= before;
    history.wrote(client, lease, accepted ? Outcome.OK : Outcome.REFUSED);
    return accepted;
  }

  // ---- 5. Clocks on a majority running fast: within the drift budget, and far beyond it.

  @ParameterizedTest
  @ValueSource(doubles = {1.005, 2.0})
  void suite5FastClocksOnAMajority(double rate) throws Exception {
    try (FaultyNodes nodes =
            start(RedisFixture.nodes(5).clockRate(0, rate).clockRate(1, rate).clockRate(2, rate));
        // Holders never release early: they hold past the ttl, so the next grant comes only when
        // the keys have expired on a majority, which is where the clocks matter.
        Workload workload =
            workload(nodes)
                .clients(2)
                .resources(1)
                .ttl(Duration.ofSeconds(1))
                .hold(Duration.ofMillis(1_100))
                .start()) {
      Workload.Result result = workload.runFor(RUN.plusSeconds(2));
      boolean withinBudget = rate - 1 <= RedlockConfig.DEFAULT_CLOCK_DRIFT_FACTOR;
      report.add(
          "5 fast clocks",
          "clock ×" + rate + " on 3 of 5 nodes (drift budget 1%)",
          withinBudget ? "0 violations" : "overlaps: the algorithm assumes bounded drift",
          result,
          withinBudget
              ? "keys outlive every holder's validity"
              : "keys expire at half the ttl; the next holder is granted while the last is valid");
      assertTrue(result.grants() > 1);
      if (withinBudget) {
        assertEquals(List.of(), result.violations());
      } else {
        // The measured verdict, asserted so that a change in it is noticed: clocks beyond the
        // budget break the lease (fencing still orders the writes).
        assertFalse(result.violations().isEmpty(), "x2 clocks on a majority must show overlaps");
        assertEquals(0, result.refusedWrites(), "writes are ordered by their tokens");
      }
    }
  }
}
