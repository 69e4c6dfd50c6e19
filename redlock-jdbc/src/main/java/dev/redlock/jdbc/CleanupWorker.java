package dev.redlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes expired rows of a lease table in bounded batches at a bounded rate, on one daemon thread
 * (see {@link JdbcLeases#startCleanup}). Expired rows are harmless — an acquisition takes an
 * expired row over — so this only keeps the table small; it never touches a row whose lease is
 * still valid, and deleting rows never resets fencing tokens (they come from a sequence).
 */
public final class CleanupWorker implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CleanupWorker.class);

  private final DataSource dataSource;
  private final Table table;
  private final Dialect dialect;
  private final int batchSize;
  private final ScheduledExecutorService thread;
  private final AtomicLong deleted = new AtomicLong();
  private final AtomicLong batches = new AtomicLong();

  private CleanupWorker(DataSource dataSource, Table table, Dialect dialect, int batchSize) {
    this.dataSource = dataSource;
    this.table = table;
    this.dialect = dialect;
    this.batchSize = batchSize;
    this.thread =
        Executors.newSingleThreadScheduledExecutor(
            task -> {
              Thread t = new Thread(task, "redlock-jdbc-cleanup-" + table.name());
              t.setDaemon(true);
              return t;
            });
  }

  static CleanupWorker start(
      DataSource dataSource, Table table, Dialect dialect, int batchSize, Duration interval) {
    CleanupWorker worker = new CleanupWorker(dataSource, table, dialect, batchSize);
    worker.thread.scheduleWithFixedDelay(
        worker::runOnce, interval.toNanos(), interval.toNanos(), TimeUnit.NANOSECONDS);
    return worker;
  }

  private void runOnce() {
    try (Connection c = dataSource.getConnection()) {
      long n =
          Transaction.run(
              c,
              () -> {
                try (PreparedStatement s = c.prepareStatement(dialect.cleanup(table))) {
                  s.setQueryTimeout(30);
                  s.setInt(1, batchSize);
                  return s.executeUpdate();
                }
              });
      batches.incrementAndGet();
      deleted.addAndGet(n);
      if (n > 0) {
        log.debug("deleted {} expired lease row(s) from {}", n, table.name());
      }
    } catch (SQLException | RuntimeException e) {
      log.warn("cleanup of {} failed; trying again next time: {}", table.name(), e.toString());
    }
  }

  /** Rows deleted so far. */
  public long deleted() {
    return deleted.get();
  }

  /** Batches run so far (including empty ones). */
  public long batches() {
    return batches.get();
  }

  /** Stops the worker; a batch in flight finishes. */
  @Override
  public void close() {
    thread.shutdown();
    try {
      if (!thread.awaitTermination(30, TimeUnit.SECONDS)) {
        thread.shutdownNow();
      }
    } catch (InterruptedException e) {
      thread.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
