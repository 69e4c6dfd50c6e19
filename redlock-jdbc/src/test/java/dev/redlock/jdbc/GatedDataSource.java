package dev.redlock.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A real pool behind a gate: while {@link #shut}, {@code getConnection} waits until the gate opens,
 * deaf to interrupts (as a driver stuck in a connect can be), then borrows from the pool. Nothing
 * of SQL is faked: the connections are the pool's.
 */
final class GatedDataSource implements DataSource {
  private final DataSource pool;
  private volatile CountDownLatch gate = new CountDownLatch(0);
  private final AtomicInteger waiting = new AtomicInteger();

  GatedDataSource(DataSource pool) {
    this.pool = pool;
  }

  void shut() {
    gate = new CountDownLatch(1);
  }

  void open() {
    gate.countDown();
  }

  /** Callers waiting at the gate now. */
  int waiting() {
    return waiting.get();
  }

  @Override
  public Connection getConnection() throws SQLException {
    waiting.incrementAndGet();
    try {
      CountDownLatch g = gate;
      while (true) {
        try {
          g.await();
          break;
        } catch (InterruptedException deaf) {
          // ignored on purpose: the caller must not depend on us hearing it
        }
      }
    } finally {
      waiting.decrementAndGet();
    }
    return pool.getConnection();
  }

  @Override
  public Connection getConnection(String user, String password) throws SQLException {
    throw new SQLFeatureNotSupportedException("the pool has its credentials");
  }

  @Override
  public PrintWriter getLogWriter() throws SQLException {
    return pool.getLogWriter();
  }

  @Override
  public void setLogWriter(PrintWriter out) throws SQLException {
    pool.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    pool.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return pool.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return pool.getParentLogger();
  }

  @Override
  public <T> T unwrap(Class<T> type) throws SQLException {
    return pool.unwrap(type);
  }

  @Override
  public boolean isWrapperFor(Class<?> type) throws SQLException {
    return pool.isWrapperFor(type);
  }
}
