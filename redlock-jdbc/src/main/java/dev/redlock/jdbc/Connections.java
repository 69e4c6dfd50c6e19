package dev.redlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connections from the caller's DataSource, each borrowed within the store's timeout: the wait runs
 * on a few threads of ours, so a pool that is exhausted or cannot connect fails an operation in
 * time, whatever its own wait (HikariCP's is 30 s by default).
 */
final class Connections {
  private static final Logger log = LoggerFactory.getLogger(Connections.class);

  /** Threads that may wait on the DataSource at once; more requests queue behind them. */
  private static final int CONNECTORS = 16;

  private final DataSource dataSource;
  private final Duration timeout;
  private final ThreadPoolExecutor connector;

  Connections(DataSource dataSource, Duration timeout, String name) {
    this.dataSource = dataSource;
    this.timeout = timeout;
    this.connector =
        new ThreadPoolExecutor(
            CONNECTORS,
            CONNECTORS,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            task -> {
              Thread t = new Thread(task, "redlock-jdbc-connect-" + name);
              t.setDaemon(true);
              return t;
            });
    connector.allowCoreThreadTimeOut(true);
  }

  /**
   * A connection from the DataSource within the timeout, like a statement: a pool that is exhausted
   * or cannot connect fails the operation then, not after its own wait (HikariCP's is 30 s by
   * default). The wait runs on a thread of ours; when it gives up, the thread is interrupted, and a
   * connection that still comes is closed at once.
   *
   * @throws SQLTimeoutException when none came within the timeout
   */
  Connection borrow() throws SQLException, InterruptedException {
    return borrow(true);
  }

  /**
   * @param interruptible false: an interrupt does not end the wait (bounded all the same), and the
   *     flag is set again afterwards
   */
  private Connection borrow(boolean interruptible) throws SQLException, InterruptedException {
    CompletableFuture<Connection> borrowed = new CompletableFuture<>();
    Future<?> waiting;
    try {
      waiting = connector.submit(() -> lend(borrowed));
    } catch (RejectedExecutionException e) {
      throw new SQLException("the lock service is closed", e);
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return borrowed.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          if (interruptible) {
            throw e;
          }
          interrupted = true; // a release is still owed: go on waiting, within the timeout
        }
      }
    } catch (ExecutionException e) {
      if (e.getCause() instanceof SQLException sql) {
        throw sql;
      }
      if (e.getCause() instanceof RuntimeException unchecked) {
        throw unchecked;
      }
      throw (Error) e.getCause(); // lend passes on nothing else
    } catch (TimeoutException e) {
      giveUp(borrowed, waiting);
      throw new SQLTimeoutException(
          "no connection from the DataSource within nodeTimeout ("
              + timeout.toMillis()
              + " ms): the pool is exhausted or cannot reach the database");
    } catch (InterruptedException e) {
      giveUp(borrowed, waiting);
      throw e;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * {@link #borrow} for what is owed whatever the caller's interrupt (a release, deleting a row a
   * lost commit may have left): an interrupt, from before or while waiting, neither stops nor
   * shortens it, and stays set. Call with the flag cleared ({@link #owed}).
   */
  Connection borrowUninterrupted() throws SQLException {
    try {
      return borrow(false);
    } catch (InterruptedException e) {
      throw new AssertionError("borrow(false) does not throw InterruptedException", e);
    }
  }

  /**
   * Runs {@code work} with the interrupt flag cleared (JDBC drivers may react to it), then sets it
   * again if it was set.
   */
  static void owed(Runnable work) {
    boolean interrupted = Thread.interrupted();
    try {
      work.run();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** On a thread of ours: a connection for {@code borrowed}, closed if nobody wants it anymore. */
  private void lend(CompletableFuture<Connection> borrowed) {
    if (borrowed.isDone()) {
      return; // given up while queued
    }
    try {
      Connection c = dataSource.getConnection();
      if (!borrowed.complete(c)) {
        c.close(); // came after the caller gave up
      }
    } catch (SQLException | RuntimeException | Error e) {
      borrowed.completeExceptionally(e);
    }
  }

  private static void giveUp(CompletableFuture<Connection> borrowed, Future<?> waiting) {
    if (borrowed.cancel(false)) {
      waiting.cancel(true); // a pool that waits interruptibly (HikariCP does) stops waiting
    } else if (!borrowed.isCompletedExceptionally()) {
      try {
        borrowed.join().close(); // it came just as we gave up
      } catch (SQLException e) {
        log.debug("could not close a connection nobody wants: {}", e.toString());
      }
    }
  }

  /** Stops the threads that wait on the pool; the pool is the caller's. */
  void close() {
    connector.shutdownNow();
  }
}
