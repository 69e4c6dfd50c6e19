package dev.redlock.jdbc;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.NodeOutcome;
import dev.redlock.spi.LeaseStore;
import dev.redlock.spi.Tally;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leases in one SQL table: a row per lease (resource, owner token, fencing token, expiry on the
 * database's clock), tokens from a sequence, drawn once the row is won. Every operation is one
 * short explicit transaction on a connection borrowed for it, whatever the pool's autocommit
 * setting, and every statement is bounded by the query timeout.
 */
final class JdbcLeaseStore implements LeaseStore<JdbcLeaseStore.Row> {
  private static final Logger log = LoggerFactory.getLogger(JdbcLeaseStore.class);
  private static final String HELD = "held by another owner";
  private static final String NOT_OWNER = "not the owner: expired or taken";

  private final DataSource dataSource;
  private final Table table;
  private final Dialect dialect;
  private final int timeoutSeconds;
  private final String name;

  /** A lease held in the table. */
  record Row(String resource, String token, long fencingToken, NodeOutcome granted)
      implements LeaseStore.Held {
    @Override
    public List<NodeOutcome> outcomes() {
      return List.of(granted);
    }

    @Override
    public String toString() {
      return "Row{" + resource + ", fence " + fencingToken + "}"; // never the token
    }
  }

  JdbcLeaseStore(DataSource dataSource, Table table, Dialect dialect, Duration timeout) {
    this.dataSource = dataSource;
    this.table = table;
    this.dialect = dialect;
    this.timeoutSeconds = (int) Math.max(1, (timeout.toMillis() + 999) / 1000);
    this.name = dialect.name().toLowerCase(java.util.Locale.ROOT) + ":" + table.name();
  }

  @Override
  public int quorum() {
    return 1;
  }

  @Override
  public int size() {
    return 1;
  }

  @Override
  public void checkResource(String resource) {
    if (resource.length() > 255) {
      throw new IllegalArgumentException(
          "resource must be at most 255 characters (the table's key), was " + resource.length());
    }
  }

  @Override
  public Vote<Row> acquire(
      String resource, String token, long ttlMillis, long start, long validUntil) {
    long began = System.nanoTime();
    try (Connection c = dataSource.getConnection()) {
      long fence = inTransaction(c, () -> take(c, resource, token, ttlMillis));
      Duration took = Duration.ofNanos(System.nanoTime() - began);
      if (fence > 0) {
        NodeOutcome ok = new NodeOutcome(name, NodeOutcome.Status.OK, "", took);
        return new Vote<>(
            new Row(resource, token, fence, ok), null, 1, new SingleAnswer(true, ok, null));
      }
      NodeOutcome no = new NodeOutcome(name, NodeOutcome.Status.REFUSED, HELD, took);
      return new Vote<>(null, Reason.HELD_ELSEWHERE, 0, new SingleAnswer(false, no, null));
    } catch (UnknownCommit e) {
      if (e.result > 0) { // we had won: the row may be committed, ours, and unknown to the engine
        forget(resource, token, ttlMillis, e);
      }
      NodeOutcome failed = failure(e, began);
      return new Vote<>(null, Reason.QUORUM_UNREACHABLE, 0, new SingleAnswer(false, failed, e));
    } catch (SQLException e) {
      NodeOutcome failed = failure(e, began);
      return new Vote<>(null, Reason.QUORUM_UNREACHABLE, 0, new SingleAnswer(false, failed, e));
    }
  }

  /**
   * Takes the row, then draws our fencing token into it (see {@link Dialect#draw}): our token if we
   * hold the row now, else 0.
   */
  private long take(Connection c, String resource, String token, long ttlMillis)
      throws SQLException {
    try (PreparedStatement take = c.prepareStatement(dialect.acquire(table))) {
      take.setQueryTimeout(timeoutSeconds);
      take.setString(1, resource);
      take.setString(2, token);
      take.setLong(3, ttlMillis);
      if (take.executeUpdate() == 0) {
        return 0; // no row touched: held (MariaDB counts a row it found, so the draw decides there)
      }
    }
    try (PreparedStatement draw = c.prepareStatement(dialect.draw(table))) {
      draw.setQueryTimeout(timeoutSeconds);
      draw.setString(1, resource);
      draw.setString(2, token);
      String readBack = dialect.readBack(table);
      if (readBack == null) { // the draw returns the token
        try (ResultSet rs = draw.executeQuery()) {
          return rs.next() ? rs.getLong(1) : 0;
        }
      }
      if (draw.executeUpdate() == 0) {
        return 0; // the row is another owner's
      }
      try (PreparedStatement read = c.prepareStatement(readBack)) {
        read.setQueryTimeout(timeoutSeconds);
        read.setString(1, resource);
        read.setString(2, token);
        try (ResultSet rs = read.executeQuery()) {
          return rs.next() ? rs.getLong(1) : 0;
        }
      }
    }
  }

  @Override
  public Tally extend(Row row, long ttlMillis) {
    long began = System.nanoTime();
    try (Connection c = dataSource.getConnection()) {
      long updated =
          inTransaction(
              c,
              () -> {
                try (PreparedStatement s = c.prepareStatement(dialect.extend(table))) {
                  s.setQueryTimeout(timeoutSeconds);
                  s.setLong(1, ttlMillis);
                  s.setString(2, row.resource());
                  s.setString(3, row.token());
                  return s.executeUpdate();
                }
              });
      Duration took = Duration.ofNanos(System.nanoTime() - began);
      return updated == 1
          ? new SingleAnswer(true, new NodeOutcome(name, NodeOutcome.Status.OK, "", took), null)
          : new SingleAnswer(
              false, new NodeOutcome(name, NodeOutcome.Status.REFUSED, NOT_OWNER, took), null);
    } catch (SQLException e) {
      return new SingleAnswer(false, failure(e, began), e);
    }
  }

  /**
   * After a won acquisition whose commit went unanswered: the row may be committed, held by nobody
   * the engine knows until its ttl ends. Deletes it (owner-checked) on another connection and says
   * so at WARN, naming the resource, never the owner token.
   */
  private void forget(String resource, String token, long ttlMillis, UnknownCommit lost) {
    long deleted;
    try (Connection c = dataSource.getConnection()) {
      deleted = inTransaction(c, () -> delete(c, resource, token));
    } catch (SQLException e) {
      log.warn(
          "acquire of '{}' counts as failed: {}; its row may be held until its ttl ({} ms) ends,"
              + " as deleting it failed too: {}",
          resource,
          lost.getMessage(),
          ttlMillis,
          e.toString());
      return;
    }
    log.warn(
        "acquire of '{}' counts as failed: {}; {}",
        resource,
        lost.getMessage(),
        deleted > 0 ? "the row it wrote is deleted" : "no row of it is left");
  }

  /** Deletes our row, if it is still ours: the count deleted. */
  private long delete(Connection c, String resource, String token) throws SQLException {
    try (PreparedStatement s = c.prepareStatement(dialect.release(table))) {
      s.setQueryTimeout(timeoutSeconds);
      s.setString(1, resource);
      s.setString(2, token);
      return s.executeUpdate();
    }
  }

  @Override
  public void release(Row row) {
    try (Connection c = dataSource.getConnection()) {
      inTransaction(c, () -> delete(c, row.resource(), row.token()));
    } catch (SQLException e) {
      // The row expires on its own; nobody else's row can be touched (owner-checked).
      log.warn(
          "release of '{}' failed; the row expires at its ttl: {}", row.resource(), e.toString());
    }
  }

  @Override
  public void releaseAll(List<Row> rows) {
    rows.forEach(this::release);
  }

  /** The pool is the caller's: nothing of ours to close. */
  @Override
  public void close() {}

  private NodeOutcome failure(SQLException e, long began) {
    Duration took = Duration.ofNanos(System.nanoTime() - began);
    NodeOutcome.Status status =
        e instanceof SQLTimeoutException ? NodeOutcome.Status.TIMED_OUT : NodeOutcome.Status.FAILED;
    return new NodeOutcome(
        name, status, e.getClass().getSimpleName() + ": " + e.getMessage(), took);
  }

  /** One statement group, committed (or rolled back), with the connection's settings restored. */
  interface Work {
    long run() throws SQLException;
  }

  /**
   * A commit that failed or whose answer never came (the link broke after it was sent): it may have
   * taken effect or not. {@code result} is what the work had returned.
   */
  static final class UnknownCommit extends SQLException {
    private static final long serialVersionUID = 1L;
    final long result;

    UnknownCommit(long result, SQLException cause) {
      super("its commit failed or went unanswered (" + cause + ")", cause.getSQLState(), cause);
      this.result = result;
    }
  }

  static long inTransaction(Connection c, Work work) throws SQLException {
    boolean autoCommit = c.getAutoCommit();
    if (autoCommit) {
      c.setAutoCommit(false);
    }
    try {
      long result = work.run();
      try {
        c.commit();
      } catch (SQLException e) {
        throw new UnknownCommit(result, e);
      }
      return result;
    } catch (SQLException | RuntimeException e) {
      try {
        c.rollback();
      } catch (SQLException rollback) {
        e.addSuppressed(rollback);
      }
      throw e;
    } finally {
      if (autoCommit) {
        try {
          c.setAutoCommit(true);
        } catch (SQLException e) {
          // Only a broken connection refuses, and the outcome is decided: it must not be replaced
          // (an acquisition committed, then reported failed, would leave a row nobody owns).
          log.debug(
              "could not restore autocommit; the pool drops a broken connection: {}", e.toString());
        }
      }
    }
  }

  @Override
  public String toString() {
    return "JdbcLeaseStore{" + name + "}";
  }
}
