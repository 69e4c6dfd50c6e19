package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import dev.redlock.testkit.AofMark;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.History;
import dev.redlock.testkit.HistoryChecker;
import dev.redlock.testkit.Nemesis;
import dev.redlock.testkit.Nemesis.Fault;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.Snapshot;
import dev.redlock.testkit.Workload;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Suite 7 of {@code docs/faults.md}: nodes that come back with older data or an older clock ({@link
 * FaultSuites}: the settings, the seed and the report).
 */
@TestMethodOrder(MethodOrderer.MethodName.class)
class StaleDataSuitesIT extends FaultSuites {
  // ---- 7. Stale data: nodes that come back with older data or an older clock.

  static final String STALE_FAULTS =
      "restart from a snapshot, backup restored, AOF tail lost, clock stepped back at boot";

  /**
   * Five {@code appendfsync everysec} nodes (an AOF that can lose its tail; snapshots work in every
   * mode) on the Redis 6.2 binary, whose clock libfaketime can step at boot.
   */
  static FaultyNodes staleDataNodes() {
    return start(
        RedisFixture.nodes(5).persistence(Persistence.AOF_EVERYSEC).binary(RedisBinary::embedded));
  }

  static Nemesis staleDataNemesis(FaultyNodes nodes, int maxFaulty) {
    return Nemesis.builder(nodes).seed(SEED).maxFaulty(maxFaulty).faults(Fault.staleData()).start();
  }

  /**
   * Runs the workload briefly before any fault: a node restarted before a client's first request is
   * quarantined from that request on, so cold clients (the first test of a JVM on a busy machine)
   * could find a majority in quarantine from their first attempt.
   */
  static Workload warm(Workload workload) throws InterruptedException {
    workload.runFor(Duration.ofMillis(500));
    return workload;
  }

  /** The stale restarts a nemesis carried out (second steps, and clock steps), by kind. */
  static Map<Fault, Integer> staleRestarts(Nemesis nemesis) {
    Map<Fault, Integer> done = new EnumMap<>(Fault.class);
    Fault.staleData().forEach(f -> done.put(f, 0));
    for (String line : nemesis.log()) {
      String text = line.substring(line.indexOf(' ') + 1);
      for (Fault f : Fault.staleData()) {
        if (text.startsWith(f + " ") && !text.contains(" taken ") && !text.contains(" marked ")) {
          done.merge(f, 1, Integer::sum);
        }
      }
    }
    return done;
  }

  static String describe(Map<Fault, Integer> restarts) {
    return restarts.get(Fault.RESTART_FROM_SNAPSHOT)
        + " from a snapshot, "
        + restarts.get(Fault.RESTORE_BACKUP)
        + " backups restored, "
        + restarts.get(Fault.AOF_LOST_TAIL)
        + " AOF tails lost, "
        + restarts.get(Fault.CLOCK_STEP_AT_BOOT)
        + " clocks stepped back";
  }

  /**
   * A nemesis brings two of five nodes at a time back with older data or an older clock; the guard
   * keeps each out of votes for maxTtl, so the lock is safe (and granted while a majority has not
   * been restarted within maxTtl).
   */
  @Test
  void suite7aStaleDataOnAMinorityWithTheGuardOn() throws Exception {
    try (FaultyNodes nodes = staleDataNodes();
        Workload workload = warm(workload(nodes).start());
        Nemesis nemesis = staleDataNemesis(nodes, 2)) {
      Workload.Result result = workload.runFor(RUN);
      Map<Fault, Integer> restarts = staleRestarts(nemesis);
      report.add(
          "7 stale data",
          STALE_FAULTS + ", ≤ 2 of 5, guard on",
          "0 violations; grants pause while a majority sits out maxTtl",
          result,
          nemesis.applied()
              + " faults: "
              + describe(restarts)
              + "; restarted nodes sit out maxTtl (3 s)");
      assertEquals(Optional.empty(), nemesis.failure(), "the nemesis ran its schedule");
      assertEquals(List.of(), result.violations(), "seed " + SEED);
      // Not asserted: grants. Each restart keeps its node out for maxTtl (3 s), so two at a time
      // soon have three of five in quarantine (as in suite 3); on a busy machine, from the start.
      assertTrue(
          restarts.values().stream().mapToInt(Integer::intValue).sum() > 0, restarts.toString());
    }
  }

  /**
   * The same faults on three of five nodes at once. With the guard, a majority in quarantine pauses
   * the service and nothing unsafe is granted; it resumes once the quarantines end. Without it (the
   * test-only switch), the restarted majority votes at once.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void suite7bStaleDataOnAMajority(boolean guard) throws Exception {
    try (FaultyNodes nodes = staleDataNodes();
        Workload workload =
            workload(nodes)
                .config(b -> guard ? settings(b) : settings(b).restartGuard(RestartGuard.OFF))
                .start();
        Redlock probe =
            Redlock.create(settings(RedlockConfig.builder().nodes(nodes.uris())).build())) {
      Workload.Result during;
      Map<Fault, Integer> restarts;
      warm(workload);
      try (Nemesis nemesis = staleDataNemesis(nodes, 3)) {
        during = workload.runFor(RUN);
        restarts = staleRestarts(nemesis);
        assertEquals(Optional.empty(), nemesis.failure(), "the nemesis ran its schedule");
      }
      Workload.Result after = null;
      if (guard) {
        await()
            .atMost(NO_HANG)
            .pollInterval(Duration.ofMillis(50))
            .ignoreException(LockUnavailableException.class) // quarantines still running
            .until(() -> probeIsGranted(probe));
        after = workload.runFor(Duration.ofSeconds(1));
      }
      report.add(
          "7 stale data",
          STALE_FAULTS + ", ≤ 3 of 5, guard " + (guard ? "on" : "OFF (test-only switch)"),
          guard
              ? "0 violations; the service may pause"
              : "measured: a short random run seldom overlaps (7c shows the double grant)",
          during,
          describe(restarts)
              + (after == null ? "" : "; after healing: " + after.grants() + " grants"));
      if (guard) {
        assertEquals(List.of(), after.violations(), "seed " + SEED); // the whole history
        assertTrue(after.grants() > 0, "service resumed once the quarantines ended");
      }
    }
  }

  /**
   * A holds a lock on every node; then a bare majority, 3 of 5, comes back with data from before
   * A's grant — restarted from a snapshot, given a backup of a minority node, restarted without its
   * AOF's last writes, or restarted from a snapshot with its clock stepped back 2 s (the 6.2
   * binary). B, who reaches every node, asks every 20 ms. With the guard the restarted nodes sit
   * out maxTtl: B is refused while A is valid and then granted with a larger token. Without it (the
   * test-only switch), B wins the restarted majority while A is valid, and the checker must see the
   * double grant (and, with the clock stepped back, the token that went back).
   */
  @ParameterizedTest(name = "{0}, guard {1}")
  @CsvSource({
    "RESTART_FROM_SNAPSHOT, true", "RESTART_FROM_SNAPSHOT, false",
    "RESTORE_BACKUP, true", "RESTORE_BACKUP, false",
    "AOF_LOST_TAIL, true", "AOF_LOST_TAIL, false",
    "CLOCK_STEP_AT_BOOT, true", "CLOCK_STEP_AT_BOOT, false"
  })
  void suite7cAHolderWhoseMajorityComesBackWithOlderData(Fault fault, boolean guard)
      throws Exception {
    Duration ttl = Duration.ofSeconds(3); // = maxTtl
    Duration step = Duration.ofSeconds(-2);
    String resource = "faults:stale";
    Persistence persistence =
        fault == Fault.AOF_LOST_TAIL ? Persistence.AOF_EVERYSEC : Persistence.RDB;
    try (FaultyNodes nodes =
        start(
            RedisFixture.nodes(5)
                .persistence(persistence)
                .binary(
                    fault == Fault.CLOCK_STEP_AT_BOOT
                        ? RedisBinary::embedded
                        : RedisBinary::locate))) {
      UnaryOperator<RedlockConfig.Builder> config =
          b -> guard ? settings(b) : settings(b).restartGuard(RestartGuard.OFF);
      History history = new History();
      List<Integer> majority = List.of(2, 3, 4);
      try (Redlock a =
              Redlock.create(config.apply(RedlockConfig.builder().nodes(nodes.uris("a"))).build());
          Redlock b =
              Redlock.create(
                  config.apply(RedlockConfig.builder().nodes(nodes.uris("b"))).build())) {
        Lease first = a.acquire(resource, ttl, NO_HANG); // markers and counters written
        history.granted("a", first);
        history.released("a", first);
        first.release();
        // The release returns once a quorum confirmed it: wait until every node deleted the key,
        // or a snapshot taken meanwhile would bring it back and refuse B until it expires.
        String key = RedlockConfig.DEFAULT_KEY_PREFIX + resource;
        await()
            .atMost(NO_HANG)
            .until(() -> nodes.nodes().all().stream().allMatch(n -> Admin.get(n, key) == null));
        // Before A's grant: what the majority will come back with.
        Map<Integer, Snapshot> snapshots = new java.util.HashMap<>();
        Map<Integer, AofMark> marks = new java.util.HashMap<>();
        Snapshot backup = fault == Fault.RESTORE_BACKUP ? nodes.node(0).snapshot() : null;
        for (int i : majority) {
          switch (fault) {
            case RESTART_FROM_SNAPSHOT, CLOCK_STEP_AT_BOOT ->
                snapshots.put(i, nodes.node(i).snapshot());
            case AOF_LOST_TAIL -> marks.put(i, nodes.node(i).markAof());
            default -> {}
          }
        }
        Lease held = a.acquire(resource, ttl, NO_HANG);
        history.granted("a", held);
        for (int i : majority) {
          RedisNode node = nodes.node(i);
          switch (fault) {
            case RESTART_FROM_SNAPSHOT -> node.restartFrom(snapshots.get(i));
            case RESTORE_BACKUP -> node.restoreBackup(backup);
            case AOF_LOST_TAIL -> node.restartLosingAofTail(marks.get(i));
            case CLOCK_STEP_AT_BOOT -> node.restart(Persistence.RDB, step); // loads its snapshot
            default -> throw new IllegalArgumentException(fault.toString());
          }
        }
        long restarted = System.nanoTime();
        assertTrue(held.isValid(), "A is valid after the restarts: the run means something");
        int refused = 0;
        Lease second = null;
        boolean whileAValid = false;
        long deadline = restarted + ttl.multipliedBy(3).toNanos();
        while (second == null && System.nanoTime() < deadline) {
          try {
            Optional<Lease> attempt = b.tryAcquire(resource, ttl);
            if (attempt.isPresent()) {
              whileAValid = held.isValid();
              second = attempt.get();
              history.granted("b", second);
              break;
            }
          } catch (LockUnavailableException e) {
            // quarantined nodes: an outage, not a grant
          }
          refused++;
          Thread.sleep(20);
        }
        long waitedMillis = (System.nanoTime() - restarted) / 1_000_000;
        List<String> violations = HistoryChecker.violations(history);
        String what =
            switch (fault) {
              case RESTART_FROM_SNAPSHOT -> "restarted from a snapshot taken before the grant";
              case RESTORE_BACKUP -> "given a backup of a minority node taken before the grant";
              case AOF_LOST_TAIL -> "restarted without the AOF's writes since before the grant";
              case CLOCK_STEP_AT_BOOT ->
                  "restarted from a snapshot taken before the grant, clock stepped back 2 s";
              default -> fault.toString();
            };
        report.add(
            "7 stale data",
            fault
                + ": holder on 5 nodes, 3 of them "
                + what
                + ", guard "
                + (guard ? "on" : "OFF (test-only switch)"),
            guard
                ? "0 violations; B waits out the quarantine"
                : "the checker finds the double grant"
                    + (fault == Fault.CLOCK_STEP_AT_BOOT ? " and the token that went back" : ""),
            violations.size(),
            second == null
                ? "B refused for " + waitedMillis + " ms"
                : "B granted after "
                    + waitedMillis
                    + " ms ("
                    + refused
                    + " refusals), A still valid: "
                    + whileAValid
                    + "; token "
                    + (second.fencingToken() > held.fencingToken() ? "larger" : "SMALLER")
                    + " than A's");
        assertTrue(second != null, "B was granted within 3 × maxTtl");
        if (guard) {
          assertFalse(whileAValid, "the guard keeps the restarted majority out while A is valid");
          assertEquals(List.of(), violations);
          assertTrue(
              waitedMillis <= ttl.toMillis() + 1_500, "B granted within maxTtl of the restarts");
        } else {
          assertTrue(whileAValid, "without the guard the stale majority votes at once");
          assertFalse(violations.isEmpty(), "the checker sees the double grant");
          assertTrue(violations.get(0).startsWith("overlapping holders"), violations.get(0));
          if (fault == Fault.CLOCK_STEP_AT_BOOT) {
            assertTrue(
                violations.stream().anyMatch(v -> v.startsWith("fencing token did not increase")),
                violations.toString());
          }
        }
        second.release();
        held.release();
      }
    }
  }
}
