package dev.redlock.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.History;
import dev.redlock.testkit.HistoryChecker;
import dev.redlock.testkit.Nemesis;
import dev.redlock.testkit.Nemesis.Fault;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.Workload;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Suites 6 and 8 to 10 of {@code docs/faults.md}, on every shape of lease: the long randomized run
 * (locks, sets, permits, read-write sides), then sets, semaphores and read-write locks under the
 * nemesis ({@link FaultSuites}: the settings, the seed and the report).
 */
@TestMethodOrder(MethodOrderer.MethodName.class)
class ShapeSuitesIT extends FaultSuites {
  // ---- 6. The long randomized run: every fault, several clients, many resources.

  /**
   * Every process and network fault, servers stalled after reading requests ({@code DEBUG SLEEP}),
   * and caller faults (threads interrupted wherever they are; half of them waiting for the lock),
   * on a mixed workload: each attempt a single lock, a set of 2–3 resources, a permit of a
   * semaphore of 2 or a side of a read-write lock. The checker must find nothing — at most one
   * holder per resource, at most 2 permit holders, writers alone — every shape must be granted, and
   * once the nodes are healed every connection must be back. Planted runs (docs/testing.md) show
   * each of the three rules can fail here.
   */
  @Test
  void suite6LongRandomizedRun() throws Exception {
    try (FaultyNodes nodes = start(RedisFixture.nodes(5).persistence(Persistence.AOF));
        Workload workload =
            workload(nodes)
                .resources(8)
                .mixed(2)
                .hold(Duration.ofMillis(10))
                .callerFaults(true)
                .start()) {
      Workload.Result result;
      int applied;
      try (Nemesis nemesis =
          Nemesis.builder(nodes)
              .seed(SEED)
              .maxFaulty(2)
              .restartWith(Persistence.AOF)
              .faults(Fault.callerSide())
              .start()) {
        result = workload.runFor(LONG_RUN);
        applied = nemesis.applied();
      } // the nemesis heals every node: then nothing may stay borrowed
      int leftInUse = workload.awaitConnectionsBack(Duration.ofSeconds(10));
      int most = HistoryChecker.mostPermitHoldersAtOnce(result.history(), Workload.SEMAPHORE);
      report.add(
          "6 randomized",
          "every fault and server stalls, ≤ 2 of 5 at once, callers interrupted, "
              + LONG_RUN.toSeconds()
              + " s, 3 clients × 2 threads; locks and sets of 8 resources, permits of a"
              + " semaphore of 2, readers and writers of 2 read-write locks; 10 ms holds",
          "0 violations, every shape granted, every connection back",
          result,
          applied
              + " faults, "
              + result.interrupted()
              + " interrupts, grants "
              + result.grantsByShape()
              + ", at most "
              + most
              + " permit holders at once, "
              + result.history().size()
              + " events, "
              + leftInUse
              + " connections left in use");
      System.out.printf(
          "suite 6: %d grants %s, %d faults, %d interrupts, %d events, %d violations, at most %d"
              + " permit holders at once, %d connections left in use, seed %d%n",
          result.grants(),
          result.grantsByShape(),
          applied,
          result.interrupted(),
          result.history().size(),
          result.violations().size(),
          most,
          leftInUse,
          SEED);
      result.violations().stream().limit(5).forEach(v -> System.out.println("suite 6: " + v));
      assertEquals(List.of(), result.violations(), "seed " + SEED);
      assertEquals(0, leftInUse, "connections left in use after healing");
      assertTrue(result.grants() > 100);
      assertEquals(
          Set.of("lock", "set", "permit", "read", "write"),
          result.grantsByShape().keySet(),
          "every shape was granted: " + result.grantsByShape());
      // The bound was reached, so a third holder could have been seen: with 10 ms holds and ~300
      // permits over 45 s, both permits are held at once many times a run.
      assertEquals(2, most, "both permits held at once at some point");
      assertTrue(applied > 10);
      assertTrue(result.interrupted() > 100, "interrupts: " + result.interrupted());
    }
  }

  /**
   * The nemesis of suites 8 to 10: kills and restarts (AOF), freezes (process or link) and cuts off
   * up to 2 of the 5 nodes, on the run's seed.
   */
  private static Nemesis killsFreezesAndCuts(FaultyNodes nodes) {
    return Nemesis.builder(nodes)
        .seed(SEED)
        .maxFaulty(2)
        .faults(
            EnumSet.of(Fault.KILL_RESTART, Fault.FREEZE_PROCESS, Fault.FREEZE_LINK, Fault.CUT_LINK))
        .restartWith(Persistence.AOF)
        .start();
  }

  // ---- 8. Multi-resource leases under the nemesis.

  /** How many grants of {@code result} were of a set of several resources (one lease each). */
  static long multiGrants(Workload.Result result) {
    Map<String, Integer> perLease = new java.util.HashMap<>();
    for (History.Event e : result.history().events()) {
      if (e.op() == History.Op.GRANT) {
        perLease.merge(e.client() + "@" + e.at() + "#" + e.token(), 1, Integer::sum);
      }
    }
    return perLease.values().stream().filter(n -> n > 1).count();
  }

  /**
   * Half of the attempts ask for a set of 2 or 3 of 4 resources at once, in random orders, the rest
   * for one of them, while the nemesis kills and restarts, freezes and cuts off up to 2 of 5 nodes:
   * the checker, judging every resource of every set against every other lease of it, must find
   * nothing, and sets must keep being granted. Planted: acquire_all.lua looking only at its first
   * key before writing them all (docs/testing.md) fails it with overlapping holders.
   */
  @Test
  void suite8MultiResourceLeasesUnderKillsFreezesAndRestarts() throws Exception {
    Duration run = RUN.multipliedBy(2);
    try (FaultyNodes nodes = start(RedisFixture.nodes(5).persistence(Persistence.AOF));
        Workload workload = workload(nodes).multiResource(true).start();
        Nemesis nemesis = killsFreezesAndCuts(nodes)) {
      Workload.Result result = workload.runFor(run);
      long sets = multiGrants(result);
      result.sampleFailures().forEach(m -> System.out.println("suite 8 failure: " + m));
      report.add(
          "8 multi-resource",
          "sets of 2–3 of 4 resources and single locks; kill/restart, freeze, cut, ≤ 2 of 5",
          "0 violations, sets granted",
          result,
          nemesis.applied() + " faults applied, " + sets + " sets granted");
      System.out.printf(
          "suite 8: %d grants (%d of sets), %d busy, %d failed, %d faults, %d violations, seed %d%n",
          result.grants(),
          sets,
          result.busy(),
          result.failures(),
          nemesis.applied(),
          result.violations().size(),
          SEED);
      assertEquals(List.of(), result.violations(), "seed " + SEED);
      assertTrue(sets > 0, "sets were granted under the faults");
      assertTrue(nemesis.applied() > 0, "the nemesis applied faults");
    }
  }

  // ---- 9. Semaphores: at most K permits under the nemesis.

  /**
   * 3 clients × 2 threads share a semaphore of 2 permits, each holding its permit 20 ms, while the
   * nemesis kills and restarts (AOF), freezes and cuts off up to 2 of 5 nodes: the checker must
   * find never more than 2 holders at once (and one per permit, tokens growing per permit), and
   * permits must keep being granted. Planted (docs/testing.md): a semaphore that hands out one
   * permit more than asked (slots 0..K) fails it with 3 holders at once; a permit granted on one
   * node's yes fails it with overlapping holders of a permit.
   */
  @Test
  void suite9SemaphorePermitsUnderKillsFreezesAndRestarts() throws Exception {
    Duration run = RUN.multipliedBy(2);
    try (FaultyNodes nodes = start(RedisFixture.nodes(5).persistence(Persistence.AOF));
        Workload workload =
            workload(nodes).semaphore(2).hold(Duration.ofMillis(20)).callerFaults(false).start();
        Nemesis nemesis = killsFreezesAndCuts(nodes)) {
      Workload.Result result = workload.runFor(run);
      int most = HistoryChecker.mostPermitHoldersAtOnce(result.history(), Workload.SEMAPHORE);
      result.sampleFailures().forEach(m -> System.out.println("suite 9 failure: " + m));
      report.add(
          "9 semaphore",
          "a semaphore of 2 permits, 6 holders; kill/restart, freeze, cut, ≤ 2 of 5",
          "0 violations (≤ 2 holders at once), permits granted",
          result,
          nemesis.applied() + " faults applied, at most " + most + " holders at once");
      System.out.printf(
          "suite 9: %d grants, %d busy, %d failed, %d faults, most holders at once %d, %d violations, seed %d%n",
          result.grants(),
          result.busy(),
          result.failures(),
          nemesis.applied(),
          most,
          result.violations().size(),
          SEED);
      assertEquals(List.of(), result.violations(), "seed " + SEED);
      // How often both permits were held at once depends on how much the faults let through (a
      // run saw 24 grants, another 105): the bound itself is reached in LeaseContract's runs.
      assertTrue(result.grants() > 0 && most >= 1, "permits were granted under the faults");
      assertTrue(nemesis.applied() > 0, "the nemesis applied faults");
    }
  }

  /**
   * Readers and writers of 2 read-write locks (a writer one time in four, half the threads waiting,
   * each holding 2 ms) while the nemesis kills and restarts, freezes and cuts off up to 2 of 5
   * nodes: the checker must find no writer overlapping any other lease of its lock and tokens in
   * order between reads and writes, and both sides must keep being granted. Planted:
   * write_acquire.lua not looking at the readers (docs/testing.md) fails it with writers not alone.
   */
  @Test
  void suite10ReadWriteLocksUnderKillsFreezesAndRestarts() throws Exception {
    Duration run = RUN.multipliedBy(2);
    try (FaultyNodes nodes = start(RedisFixture.nodes(5).persistence(Persistence.AOF));
        Workload workload =
            workload(nodes).resources(2).hold(Duration.ofMillis(2)).readWrite(true).start();
        Nemesis nemesis = killsFreezesAndCuts(nodes)) {
      Workload.Result result = workload.runFor(run);
      long reads = 0;
      long writes = 0;
      for (History.Event e : result.history().events()) {
        if (e.op() == History.Op.READ_GRANT) {
          reads++;
        } else if (e.op() == History.Op.GRANT) {
          writes++;
        }
      }
      result.sampleFailures().forEach(m -> System.out.println("suite 10 failure: " + m));
      report.add(
          "10 read-write",
          "readers and writers of 2 read-write locks; kill/restart, freeze, cut, ≤ 2 of 5",
          "0 violations, both sides granted",
          result,
          nemesis.applied() + " faults applied, " + reads + " reads, " + writes + " writes");
      System.out.printf(
          "suite 10: %d reads, %d writes, %d busy, %d failed, %d faults, %d violations, seed %d%n",
          reads,
          writes,
          result.busy(),
          result.failures(),
          nemesis.applied(),
          result.violations().size(),
          SEED);
      result.violations().stream().limit(5).forEach(v -> System.out.println("suite 10: " + v));
      assertEquals(List.of(), result.violations(), "seed " + SEED);
      assertTrue(reads > 0 && writes > 0, "both sides were granted under the faults");
      assertTrue(nemesis.applied() > 0, "the nemesis applied faults");
    }
  }

  /**
   * Suite 3's bare majority, for a read-write lock: A reads on exactly {0, 1} of 3 (partitioned
   * from node 2); node 1 restarts empty; B, who reaches every node, asks to write. With the guard
   * (the same text in both read-write scripts), node 1 sits out and B is refused; without it, B
   * wins {1, 2} while A's read is valid, and the checker must see a writer not alone.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void suite10bAReaderOnABareMajorityAndARestartedNode(boolean guard) throws Exception {
    try (FaultyNodes nodes = start(RedisFixture.nodes(3))) {
      UnaryOperator<RedlockConfig.Builder> config = b -> bareMajority(b, guard);
      History history = new History();
      try (Redlock a =
          Redlock.create(config.apply(RedlockConfig.builder().nodes(nodes.uris("a"))).build())) {
        nodes.partition(Set.of("a"), Set.of(2));
        Lease read =
            a.readWriteLock("faults:rw-bare").readLock().acquire(Duration.ofSeconds(10), NO_HANG);
        history.grantedRead("a", read);
        nodes.node(1).restart(Persistence.NONE);
        try (Redlock b =
            Redlock.create(config.apply(RedlockConfig.builder().nodes(nodes.uris("b"))).build())) {
          Optional<Lease> write = Optional.empty();
          try {
            write =
                b.readWriteLock("faults:rw-bare").writeLock().tryAcquire(Duration.ofSeconds(10));
          } catch (LockUnavailableException e) {
            // refused: the guard kept node 1 out
          }
          write.ifPresent(lease -> history.granted("b", lease));
          boolean aStillValid = read.isValid();
          List<String> violations = HistoryChecker.violations(history);
          report.add(
              "9b read-write restart",
              "reader on a bare majority, one of its nodes restarts empty, a writer asks, guard "
                  + (guard ? "on" : "OFF (test-only switch)"),
              guard ? "0 violations" : "the checker finds the writer not alone",
              violations.size(),
              write.isPresent()
                  ? "writer granted while the read is valid: " + aStillValid
                  : "writer refused");
          assertTrue(aStillValid);
          if (guard) {
            assertTrue(write.isEmpty(), "the guard keeps the emptied node out");
            assertEquals(List.of(), violations);
          } else {
            assertTrue(write.isPresent(), "without the guard the emptied node votes again");
            assertFalse(violations.isEmpty(), "the checker sees the writer not alone");
            assertTrue(violations.get(0).startsWith("writer not alone"), violations.get(0));
            write.get().release();
          }
        }
        read.release();
      }
    }
  }
}
