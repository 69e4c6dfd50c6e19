package example;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.admin.LockStatus;
import dev.redlock.admin.RedlockAdmin;
import dev.redlock.jdbc.JdbcLeases;
import dev.redlock.micrometer.RedlockMetrics;
import dev.redlock.shedlock.CurrentLock;
import dev.redlock.shedlock.RedlockLockProvider;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * What a user's code on the module path does: a type from each module the module-info reaches,
 * and (main) one lease on a real node, counted by the metrics listener. .ci/check-release runs
 * it.
 */
public final class Consumer {
  private Consumer() {}

  /** A Redlock over the given database (compiled, not run: there is no database here). */
  public static Redlock locks(DataSource dataSource) {
    return Redlock.create(
        RedlockConfig.builder()
            .store(JdbcLeases.store(dataSource, "locks"))
            .nodeTimeout(Duration.ofSeconds(2))
            .build());
  }

  /**
   * Takes and releases one lease on the node {@code args[0]}, and checks the metrics saw it.
   * Exits 1 if anything is missing.
   */
  public static void main(String[] args) throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    RedlockConfig config =
        RedlockConfig.builder()
            .node(args[0])
            // A node new to the lock sits out the restart guard for maxTtl: keep that short.
            .maxTtl(Duration.ofSeconds(1))
            .listener(new RedlockMetrics(registry))
            .build();
    long token;
    try (Redlock redlock = Redlock.create(config);
        Lease lease = redlock.acquire("consumer", Duration.ofSeconds(1), Duration.ofSeconds(10))) {
      token = lease.fencingToken();
    }
    long shedLockToken; // a ShedLock lock over the same nodes, its token read as a job reads it
    try (Redlock redlock = Redlock.create(config);
        RedlockLockProvider provider = RedlockLockProvider.create(redlock, "shedlock:")) {
      SimpleLock lock =
          provider
              .lock(
                  new LockConfiguration(
                      Instant.now(), "consumer", Duration.ofSeconds(1), Duration.ZERO))
              .orElseThrow();
      shedLockToken = CurrentLock.fencingToken();
      lock.unlock();
    }
    LockStatus status; // the operator's module reads the nodes through core's qualified exports
    try (RedlockAdmin admin = RedlockAdmin.create(config)) {
      status = admin.status("consumer");
    }
    long attempts =
        registry.find("redlock.acquire").timers().stream().mapToLong(t -> t.count()).sum();
    String module = Redlock.class.getModule().getName();
    System.out.println(
        "consumer: lease taken and released on the module path (module " + module + ", token "
            + token + "), " + attempts + " attempt(s) in the metrics, status " + status.verdict()
            + ", a ShedLock lock with token " + shedLockToken);
    if (!"dev.redlock".equals(module) || attempts < 1 || !status.nodes().get(0).reachable()
        || shedLockToken <= 0) {
      System.exit(1);
    }
  }
}
