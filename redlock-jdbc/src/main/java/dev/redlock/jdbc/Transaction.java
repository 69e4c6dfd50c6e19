package dev.redlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One short explicit transaction on a borrowed connection, whatever the pool's autocommit setting:
 * committed, or rolled back on any failure, with the connection's autocommit restored.
 */
final class Transaction {
  private static final Logger log = LoggerFactory.getLogger(Transaction.class);

  private Transaction() {}

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

  static long run(Connection c, Work work) throws SQLException {
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

  /**
   * A deadlock the database broke by rolling this transaction back: PostgreSQL's 40P01, or
   * MariaDB's error 1213 (SQLSTATE 40001). Not the rest of class 40: a serialization failure on
   * PostgreSQL means the pool runs a stricter isolation than this store's statements expect, and
   * 40003 (completion unknown) is an outage; both are reported as failures, never as "held".
   */
  static boolean deadlockVictim(SQLException e) {
    String state = e.getSQLState();
    return "40P01".equals(state) || ("40001".equals(state) && e.getErrorCode() == 1213);
  }
}
