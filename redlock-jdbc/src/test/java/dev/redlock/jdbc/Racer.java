package dev.redlock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redlock.Lease;
import dev.redlock.Redlock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * One of two processes racing for one resource (run by {@link JdbcLeasesContract}): connects, says
 * READY, waits for the go file, makes one attempt, says WON or LOST, and keeps what it won until
 * the done file appears. Arguments: url user password table resource goFile doneFile.
 */
public final class Racer {
  private Racer() {} // a program, not a type: since the module has a descriptor, javac asks

  public static void main(String[] args) throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(args[0]);
    config.setUsername(args[1]);
    config.setPassword(args[2]);
    config.setMaximumPoolSize(2);
    Path go = Path.of(args[5]);
    Path done = Path.of(args[6]);
    try (HikariDataSource pool = new HikariDataSource(config);
        Redlock locks = JdbcLeasesContract.open(pool, args[3])) {
      System.out.println("READY");
      System.out.flush();
      waitFor(go);
      Optional<Lease> lease = locks.tryAcquire(args[4], Duration.ofSeconds(20));
      System.out.println(lease.isPresent() ? "WON" : "LOST");
      System.out.flush();
      waitFor(done);
      lease.ifPresent(Lease::release);
    }
  }

  /** A bounded poll for a file the test creates: the processes share nothing else. */
  private static void waitFor(Path file) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!Files.exists(file)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(file + " never appeared");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }
}
