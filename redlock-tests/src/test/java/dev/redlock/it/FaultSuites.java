package dev.redlock.it;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.HistoryChecker;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.Workload;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fault suites of {@code docs/faults.md}, each with its expectation next to it, in classes by
 * concern: {@link FaultSuitesIT} (0 to 3), {@link PauseAndClockSuitesIT} (4, 5), {@link
 * ShapeSuitesIT} (6, 8 to 10) and {@link StaleDataSuitesIT} (7). Every run is judged by the {@link
 * HistoryChecker}; the rows of the report, of every suite class run in the JVM, are written to
 * {@code target/faults.md} after each class. {@code -Dredlock.faults.seed=S} replays a run's
 * nemesis schedules; {@code -Dredlock.faults.seconds} and {@code -Dredlock.faults.longSeconds} size
 * the runs ({@code -Psoak} sets a long one). The default tier runs suites 1 and 2 with a few kinds
 * of fault; {@code -Dredlock.faults.everyKind=true} (the full tier) with every kind.
 */
abstract class FaultSuites {
  static final long SEED = Long.getLong("redlock.faults.seed", System.nanoTime());
  static final Duration RUN = Duration.ofSeconds(Long.getLong("redlock.faults.seconds", 4));
  static final Duration LONG_RUN =
      Duration.ofSeconds(Long.getLong("redlock.faults.longSeconds", 45));
  static final Duration NO_HANG = Duration.ofSeconds(30);
  static final boolean EVERY_KIND = Boolean.getBoolean("redlock.faults.everyKind");

  static final FaultReport report = new FaultReport(SEED);

  /** The seed of every suite class, printed before its tests: one seed per JVM. */
  @BeforeAll
  static void printSeed(TestInfo info) {
    System.out.println(
        info.getTestClass().map(Class::getSimpleName).orElse("fault suites")
            + " seed="
            + SEED
            + " (replay: -Dredlock.faults.seed="
            + SEED
            + ")");
  }

  /** After each suite class: the report holds the rows of every suite class run so far. */
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

  /**
   * Suites 3's and 10b's bare majority: the suites' settings, a 10 s maxTtl, the guard on or off.
   */
  static RedlockConfig.Builder bareMajority(RedlockConfig.Builder b, boolean guard) {
    RedlockConfig.Builder s = settings(b).maxTtl(Duration.ofSeconds(10));
    return guard ? s : s.restartGuard(RestartGuard.OFF);
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
        .config(FaultSuites::settings);
  }

  /** Whether {@code probe} is granted the probe's resource now (released at once if so). */
  static boolean probeIsGranted(Redlock probe) {
    Optional<Lease> lease = probe.tryAcquire("faults:probe", Duration.ofSeconds(2));
    lease.ifPresent(Lease::release);
    return lease.isPresent();
  }
}
