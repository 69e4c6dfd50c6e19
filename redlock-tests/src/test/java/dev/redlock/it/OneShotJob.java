package dev.redlock.it;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A one-shot job as cron starts it: a fresh JVM that makes one {@code tryAcquire} with the default
 * settings, says what came of it on one line, and exits (0: acquired, 1: held elsewhere, 2: the
 * attempt failed). Run by {@link ColdStartIT} in a child process.
 */
final class OneShotJob {
  private OneShotJob() {}

  /** {@code args}: the resource, then the node URIs. */
  public static void main(String[] args) {
    RedlockConfig config =
        RedlockConfig.builder().nodes(List.of(args).subList(1, args.length)).build();
    try (Redlock redlock = Redlock.create(config)) {
      Optional<Lease> lease = redlock.tryAcquire(args[0], Duration.ofSeconds(10));
      if (lease.isEmpty()) {
        System.out.println("held elsewhere");
        System.exit(1);
      }
      System.out.println("acquired " + lease.get().nodeOutcomes());
      lease.get().release();
    } catch (LockUnavailableException e) {
      System.out.println("failed " + e.reason() + " " + e.nodeOutcomes());
      System.exit(2);
    }
  }
}
