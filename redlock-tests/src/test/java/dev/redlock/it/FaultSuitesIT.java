package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.RestartGuard;
import dev.redlock.testkit.AofMark;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.History;
import dev.redlock.testkit.History.Outcome;
import dev.redlock.testkit.HistoryChecker;
import dev.redlock.testkit.Nemesis;
import dev.redlock.testkit.Nemesis.Fault;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.Snapshot;
import dev.redlock.testkit.Stall;
import dev.redlock.testkit.Timing;
import dev.redlock.testkit.Workload;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The fault suites of {@code docs/faults.md}, each with its expectation next to it. Every run is
 * judged by the {@link HistoryChecker}; the rows of the report are written to {@code
 * target/faults.md}. {@code -Dredlock.faults.seed=S} replays a run's nemesis schedules; {@code
 * -Dredlock.faults.seconds} and {@code -Dredlock.faults.longSeconds} size the runs ({@code -Psoak}
 * sets a long one). The default tier runs suites 1 and 2 with a few kinds of fault; {@code
 * -Dredlock.faults.everyKind=true} (the full tier) with every kind.
 */
@TestMethodOrder(MethodOrderer.MethodName.class)
class FaultSuitesIT {
  static final long SEED = Long.getLong("redlock.faults.seed", System.nanoTime());
  static final Duration RUN = Duration.ofSeconds(Long.getLong("redlock.faults.seconds", 4));
  static final Duration LONG_RUN =
      Duration.ofSeconds(Long.getLong("redlock.faults.longSeconds", 45));
  static final Duration NO_HANG = Duration.ofSeconds(30);
  static final boolean EVERY_KIND = Boolean.getBoolean("redlock.faults.everyKind");

  /**
   * How long a healed service may take to come back for every client: the kit's bound for something
   * that must happen ({@link Timing#noHang()}, 30 s times {@code redlock.test.timing}), not a speed
   * claim. What it must wait for is bounded by the configuration — a key a failed attempt left on a
   * node lives at most the workload's ttl (2 s), a re-sent release backs off to 2 s, a connection
   * is made within connectTimeout (2 s), a vote takes a nodeTimeout (100 ms) — but a loaded machine
   * stretches each of those (on 2 shared cores a PING through a healed proxy was seen taking a
   * second), so no tighter bound holds everywhere.
   */
  static final Duration RESUMES = Timing.get().noHang();

  static final FaultReport report = new FaultReport(SEED);

  static {
    System.out.println(
        "FaultSuitesIT seed=" + SEED + " (replay: -Dredlock.faults.seed=" + SEED + ")");
  }

  @AfterAll
  static void writeReport() {
    report.write(Path.of("target", "faults.md"));
  }

  /**
   * Short timeouts and a short maxTtl, so emptied nodes come back within a run. The suites' AOF
   * nodes fsync every write and keep their configuration: a restart of one loses nothing, so it
   * keeps its vote (RestartGuard.TRUST_FSYNCED_AOF_RESTARTS). Without it each restart quarantines
   * its node for maxTtl, and a nemesis that restarts a minority at a time soon has a majority
   * sitting out.
   */
  static RedlockConfig.Builder settings(RedlockConfig.Builder b) {
    return b.nodeTimeout(Duration.ofMillis(100))
        .retryDelay(Duration.ofMillis(5))
        .retryJitter(Duration.ofMillis(10))
        .maxTtl(Duration.ofSeconds(3))
        .restartGuard(RestartGuard.TRUST_FSYNCED_AOF_RESTARTS);
  }

  /** Each test's nodes, behind fault proxies: stopped after it, if it did not stop them. */
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  static FaultyNodes start(RedisFixture.Spec spec) {
    return redis.startBehindProxies(spec);
  }

  static Workload.Builder workload(FaultyNodes nodes) {
    return Workload.builder(nodes)
        .clients(3)
        .threadsPerClient(2)
        .resources(4)
        .ttl(Duration.ofSeconds(2))
        .config(FaultSuitesIT::settings);
  }

  // ---- 0. The orphan SET: a request the client gave up on runs when its frozen node thaws.

  /**
   * Node 0 of 3 is frozen (its process, or its link) for a second, while a client acquires (on
   * nodes 1 and 2) and releases: it gives up on node 0 for both. On thaw node 0 may run the queued
   * {@code SET NX}: an orphan key nobody will use. It must never let two holders in (here B, on the
   * other two nodes, is granted while it lives). A sends every release a node did not confirm again
   * until it is confirmed, so the orphan is deleted long before its ttl; how long it lives after
   * the thaw is measured.
   */
  @ParameterizedTest
  @ValueSource(strings = {"process", "link"})
  void orphanSetAfterAFrozenNodeThaws(String frozen) throws Exception {
    Duration ttl = Duration.ofSeconds(10);
    String resource = "orphan:" + frozen;
    String key = RedlockConfig.DEFAULT_KEY_PREFIX + resource;
    try (FaultyNodes nodes = start(RedisFixture.nodes(3));
        Redlock a =
            Redlock.create(
                settings(RedlockConfig.builder().nodes(nodes.uris("a")))
                    .maxTtl(Duration.ofSeconds(10))
                    .build());
        Redlock b =
            Redlock.create(
                settings(RedlockConfig.builder().nodes(nodes.uris("b")))
                    .maxTtl(Duration.ofSeconds(10))
                    .build())) {
      // Warm: A has an idle connection to every node, so its SET is written to node 0 at once.
      a.acquire(resource, ttl, NO_HANG).release();
      if (frozen.equals("process")) {
        nodes.node(0).pause();
      } else {
        nodes.partition(Set.of("a"), Set.of(0));
      }
      a.acquire(resource, ttl, NO_HANG).release();
      // The fault lasts a second: long past A's node timeout, so A has given up on node 0.
      Thread.sleep(1_000);
      long thawedAt = System.nanoTime();
      if (frozen.equals("process")) {
        nodes.node(0).resume();
      } else {
        nodes.restoreLinks();
      }
      AtomicLong seenUntil = new AtomicLong(thawedAt);
      List<Boolean> bGranted = new java.util.ArrayList<>();
      await()
          .atMost(ttl.plusSeconds(5))
          .pollInterval(Duration.ofMillis(5))
          .until(
              () -> {
                if (Admin.get(nodes.node(0), key) == null) {
                  return true;
                }
                seenUntil.set(System.nanoTime());
                if (bGranted.isEmpty()) { // while the orphan lives, B still gets the lock
                  Optional<Lease> lease = b.tryAcquire(resource, Duration.ofSeconds(2));
                  bGranted.add(lease.isPresent());
                  lease.ifPresent(Lease::release);
                }
                return false;
              });
      long livedMillis = (seenUntil.get() - thawedAt) / 1_000_000;
      report.measure(
          "frozen "
              + frozen
              + ": the orphan key lived "
              + (bGranted.isEmpty() ? "0 ms (never seen)" : "≈ " + livedMillis + " ms")
              + " after the thaw (ttl "
              + ttl.toMillis()
              + " ms)"
              + (bGranted.isEmpty()
                  ? ""
                  : "; another client was granted the lock meanwhile: " + bGranted.get(0)));
      assertTrue(bGranted.isEmpty() || bGranted.get(0), "an orphan on one node delays no quorum");
      // The client sends unconfirmed releases again (backing off to 2 s): the orphan is deleted
      // by that, long before its ttl would end it.
      assertTrue(livedMillis < ttl.toMillis() / 2, "orphan lived " + livedMillis + " ms");
    }
  }

  // ---- 1. Minority faults: zero violations, acquisitions keep succeeding.

  /** The faults of one node's process or link, as both suites inject them. */
  static final List<Fault> NODE_FAULTS =
      List.of(
          Fault.FREEZE_PROCESS,
          Fault.KILL_RESTART,
          Fault.CUT_LINK,
          Fault.FREEZE_LINK,
          Fault.SLOW_LINK);

  /** A process, a link and a partition fault by default; every kind in the full tier. */
  static Stream<Fault> minorityFaults() {
    return EVERY_KIND
        ? Stream.concat(NODE_FAULTS.stream(), Stream.of(Fault.PARTITION))
        : Stream.of(Fault.KILL_RESTART, Fault.FREEZE_LINK, Fault.PARTITION);
  }

  @ParameterizedTest
  @MethodSource("minorityFaults")
  void suite1MinorityFaultsKeepSafetyAndProgress(Fault fault) throws Exception {
    try (FaultyNodes nodes = start(RedisFixture.nodes(5).persistence(Persistence.AOF));
        Workload workload = workload(nodes).start();
        Nemesis nemesis =
            Nemesis.builder(nodes)
                .seed(SEED)
                .maxFaulty(2)
                .faults(EnumSet.of(fault))
                .restartWith(Persistence.AOF)
                .start()) {
      Workload.Result result = workload.runFor(RUN);
      result.sampleFailures().forEach(m -> System.out.println(fault + " failure: " + m));
      report.add(
          "1 minority",
          fault + ", ≤ 2 of 5 nodes",
          "0 violations, grants continue",
          result,
          nemesis.applied() + " faults applied");
      assertEquals(List.of(), result.violations(), "seed " + SEED);
      assertTrue(result.grants() > 0, "acquisitions kept succeeding under " + fault);
      assertTrue(nemesis.applied() > 0, "the nemesis applied " + fault);
    }
  }

  @Test
  void suite1MinorityOfFastClocks() throws Exception {
    try (FaultyNodes nodes = start(RedisFixture.nodes(5).clockRate(0, 2.0).clockRate(1, 2.0));
        Workload workload = workload(nodes).start()) {
      Workload.Result result = workload.runFor(RUN);
      report.add(
          "1 minority",
          "clock ×2 on 2 of 5 nodes",
          "0 violations, grants continue",
          result,
          "keys on the fast nodes expire in half the time");
      assertEquals(List.of(), result.violations());
      assertTrue(result.grants() > 0);
    }
  }

  // ---- 2. Majority faults: zero violations, fast failure with an account, service resumes.

  /** A frozen link by default (the partition case runs too); every kind in the full tier. */
  static Stream<Fault> majorityFaults() {
    return EVERY_KIND ? NODE_FAULTS.stream() : Stream.of(Fault.FREEZE_LINK);
  }

  @ParameterizedTest
  @MethodSource("majorityFaults")
  void suite2MajorityFaultsFailFastAndServiceResumes(Fault fault) throws Exception {
    try (FaultyNodes nodes = start(RedisFixture.nodes(5).persistence(Persistence.AOF));
        Workload workload = workload(nodes).start();
        Redlock probe =
            Redlock.create(settings(RedlockConfig.builder().nodes(nodes.uris())).build())) {
      for (int i = 0; i < 3; i++) {
        switch (fault) {
          case FREEZE_PROCESS -> nodes.node(i).pause();
          case KILL_RESTART -> nodes.node(i).kill(); // down until healed
          case CUT_LINK -> nodes.cut(i);
          case FREEZE_LINK -> nodes.freezeLink(i);
          case SLOW_LINK -> nodes.latency(i, Duration.ofMillis(300)); // > nodeTimeout
          default -> throw new IllegalArgumentException(fault.toString());
        }
      }
      Workload.Result during = workload.runFor(RUN);
      LockUnavailableException account =
          assertTimeoutPreemptively(
              NO_HANG,
              () -> {
                try {
                  probe.tryAcquire("faults:probe", Duration.ofSeconds(2));
                  throw new AssertionError("a majority is faulty: the lock cannot be granted");
                } catch (LockUnavailableException e) {
                  return e;
                }
              });
      assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, account.reason());
      assertTrue(
          account.nodeOutcomes().stream().filter(o -> o.status() != NodeOutcome.Status.OK).count()
              >= 3,
          account.getMessage());
      assertTrue(account.getMessage().contains(nodes.uris().get(0)), account.getMessage());

      nodes.heal(); // killed nodes come back with their data (AOF)
      await()
          .atMost(RESUMES)
          .ignoreException(LockUnavailableException.class) // requests still held by the fault
          .until(() -> probeIsGranted(probe));
      awaitEveryClientResumes(workload);
      Workload.Result after = workload.runFor(RUN);
      report.add(
          "2 majority",
          fault + " on 3 of 5 nodes",
          "0 violations, no grant, fast failure",
          during,
          "every attempt: " + account.reason() + "; after healing: " + after.grants() + " grants");
      assertEquals(List.of(), during.violations());
      assertEquals(0, during.grants(), "no grant without a quorum");
      assertTrue(during.failures() > 0);
      assertEquals(List.of(), after.violations());
      awaitEveryClientResumes(workload); // and still serves every client after the run
    }
  }

  @Test
  void suite2PartitionOfEveryClientFromAMajority() throws Exception {
    try (FaultyNodes nodes = start(RedisFixture.nodes(5));
        Workload workload = workload(nodes).start()) {
      nodes.partition(nodes.clients(), Set.of(0, 1, 2));
      Workload.Result during = workload.runFor(RUN);
      nodes.heal();
      awaitEveryClientResumes(workload);
      Workload.Result after = workload.runFor(RUN);
      report.add(
          "2 majority",
          "PARTITION: every client cut off 3 of 5 nodes",
          "0 violations, no grant, fast failure",
          during,
          "after healing: " + after.grants() + " grants");
      assertEquals(List.of(), during.violations());
      assertEquals(0, during.grants());
      assertEquals(List.of(), after.violations());
      awaitEveryClientResumes(workload); // and still serves every client after the run
    }
  }

  /**
   * Waits until each of the workload's clients is granted again after a heal: each has links,
   * connections, late replies and re-sent releases of its own, so the probe's grant (another
   * client, on the shared links) says nothing about them, and a fixed run straight after the heal
   * measured how fast a loaded machine recovers rather than whether the service did (and a grant
   * counted in a fixed 4 s window after it, too: seen at 0 with load average 16 on 2 cores). Fails
   * the test if one never is: a client the library leaves stuck after the fault ended.
   */
  private static void awaitEveryClientResumes(Workload workload) {
    await("every workload client granted again after healing")
        .atMost(RESUMES)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> workload.everyClientIsGranted("faults:resumed", Duration.ofSeconds(2)));
  }

  /** Whether {@code probe} is granted the probe's resource now (released at once if so). */
  private static boolean probeIsGranted(Redlock probe) {
    Optional<Lease> lease = probe.tryAcquire("faults:probe", Duration.ofSeconds(2));
    lease.ifPresent(Lease::release);
    return lease.isPresent();
  }

  // ---- 3. Restart without persistence.

  @Test
  void suite3RestartsWithoutPersistenceWithTheGuardOn() throws Exception {
    try (FaultyNodes nodes = start(RedisFixture.nodes(5));
        Workload workload = workload(nodes).start();
        Nemesis nemesis =
            Nemesis.builder(nodes)
                .seed(SEED)
                .maxFaulty(2)
                .faults(EnumSet.of(Fault.KILL_RESTART))
                .restartWith(Persistence.NONE)
                .start()) {
      Workload.Result result = workload.runFor(RUN);
      report.add(
          "3 restart",
          "kill + restart empty, ≤ 2 of 5, guard on",
          "0 violations",
          result,
          nemesis.applied() + " restarts; emptied nodes sit out maxTtl (3 s)");
      assertEquals(List.of(), result.violations(), "seed " + SEED);
    }
  }

  /**
   * A holds on exactly {0, 1} of 3 (partitioned from node 2); node 1 restarts empty; B, who still
   * reaches every node, asks. With the guard, node 1 sits out and B is refused; without it, B wins
   * {1, 2} while A is valid, and the checker must see it.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void suite3ABareMajorityHolderAndARestartedNode(boolean guard) throws Exception {
    try (FaultyNodes nodes = start(RedisFixture.nodes(3))) {
      UnaryOperator<RedlockConfig.Builder> config =
          b -> {
            RedlockConfig.Builder s = settings(b).maxTtl(Duration.ofSeconds(10));
            return guard ? s : s.restartGuard(RestartGuard.OFF);
          };
      History history = new History();
      try (Redlock a =
          Redlock.create(config.apply(RedlockConfig.builder().nodes(nodes.uris("a"))).build())) {
        nodes.partition(Set.of("a"), Set.of(2));
        Lease held = a.acquire("faults:bare", Duration.ofSeconds(10), NO_HANG);
        history.granted("a", held);
        nodes.node(1).restart(Persistence.NONE);
        // B starts now: a client made before the restart would hold a connection to node 1's old
        // process, and its first request there would fail (as every warm client's does once).
        try (Redlock b =
            Redlock.create(config.apply(RedlockConfig.builder().nodes(nodes.uris("b"))).build())) {
          Optional<Lease> second = Optional.empty();
          try {
            second = b.tryAcquire("faults:bare", Duration.ofSeconds(10));
          } catch (LockUnavailableException e) {
            // refused: the guard kept node 1 out
          }
          second.ifPresent(lease -> history.granted("b", lease));
          boolean aStillValid = held.isValid();
          List<String> violations = HistoryChecker.violations(history);
          report.add(
              "3 restart",
              "holder on a bare majority, one of its nodes restarts empty, guard "
                  + (guard ? "on" : "OFF (test-only switch)"),
              guard ? "0 violations" : "the checker finds the double grant",
              violations.size(),
              second.isPresent() ? "B granted while A valid: " + aStillValid : "B refused");
          assertTrue(aStillValid);
          if (guard) {
            assertTrue(second.isEmpty(), "the guard keeps the emptied node out");
            assertEquals(List.of(), violations);
          } else {
            assertTrue(second.isPresent(), "without the guard the emptied node votes again");
            assertFalse(violations.isEmpty(), "the checker sees the double grant");
            assertTrue(violations.get(0).startsWith("overlapping holders"), violations.get(0));
            second.get().release();
          }
        }
        held.release();
      }
    }
  }

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

  // ---- 6. The long randomized run: every fault, several clients, many resources.

  /**
   * Every process and network fault, servers stalled after reading requests ({@code DEBUG SLEEP}),
   * and caller faults (threads interrupted wherever they are; half of them waiting for the lock),
   * on a mixed workload: each attempt a single lock, a set of 2–3 resources, a permit of a
   * semaphore of 2 or a side of a read-write lock (issue 17). The checker must find nothing — at
   * most one holder per resource, at most 2 permit holders, writers alone — every shape must be
   * granted, and once the nodes are healed every connection must be back. Planted runs
   * (docs/testing.md) show each of the three rules can fail here.
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

  // ---- 7. Stale data: nodes that come back with older data or an older clock (issue 12).

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

  // ---- 8. Multi-resource leases under the nemesis (issue 17 item 1).

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
        Nemesis nemesis =
            Nemesis.builder(nodes)
                .seed(SEED)
                .maxFaulty(2)
                .faults(
                    EnumSet.of(
                        Fault.KILL_RESTART,
                        Fault.FREEZE_PROCESS,
                        Fault.FREEZE_LINK,
                        Fault.CUT_LINK))
                .restartWith(Persistence.AOF)
                .start()) {
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
        Nemesis nemesis =
            Nemesis.builder(nodes)
                .seed(SEED)
                .maxFaulty(2)
                .faults(
                    EnumSet.of(
                        Fault.KILL_RESTART,
                        Fault.FREEZE_PROCESS,
                        Fault.FREEZE_LINK,
                        Fault.CUT_LINK))
                .restartWith(Persistence.AOF)
                .start()) {
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
        Nemesis nemesis =
            Nemesis.builder(nodes)
                .seed(SEED)
                .maxFaulty(2)
                .faults(
                    EnumSet.of(
                        Fault.KILL_RESTART,
                        Fault.FREEZE_PROCESS,
                        Fault.FREEZE_LINK,
                        Fault.CUT_LINK))
                .restartWith(Persistence.AOF)
                .start()) {
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
      UnaryOperator<RedlockConfig.Builder> config =
          b -> {
            RedlockConfig.Builder s = settings(b).maxTtl(Duration.ofSeconds(10));
            return guard ? s : s.restartGuard(RestartGuard.OFF);
          };
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
