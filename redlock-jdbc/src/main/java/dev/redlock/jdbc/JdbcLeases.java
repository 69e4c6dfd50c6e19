package dev.redlock.jdbc;

import dev.redlock.spi.LeaseStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * Leases in a SQL table (PostgreSQL 15+, MariaDB 10.11+): the same {@link dev.redlock.Lease}, the
 * same {@code withLock}, renewal, lost-lease signal and growing fencing tokens as the Redis quorum,
 * for teams that have a database and no Redis.
 *
 * <pre>{@code
 * JdbcLeases.createTableIfAbsent(dataSource, "redlock_leases");   // or run the shipped SQL
 * try (Redlock locks = Redlock.create(RedlockConfig.builder()
 *         .store(JdbcLeases.store(dataSource, "redlock_leases"))
 *         .nodeTimeout(Duration.ofSeconds(2))
 *         .build())) {
 *   locks.withLock("settlement:2026-11-30", Duration.ofSeconds(30), Duration.ofSeconds(10),
 *       lease -> settle(lease.fencingToken()));
 * }
 * }</pre>
 *
 * <p>Times are the database's ({@code clock_timestamp()} / {@code UTC_TIMESTAMP(6)}), never the
 * clients': application servers with skewed clocks still agree on who holds what. A lease's
 * validity is measured the same way as for Redis: on this JVM's monotonic clock, from before the
 * statement, minus the drift allowance. Fencing tokens come from a database sequence: strictly
 * increasing across all resources, never reset by deleting rows.
 */
public final class JdbcLeases {
  private JdbcLeases() {}

  /**
   * The leases of {@code table}, as a store for {@link
   * dev.redlock.config.RedlockConfig.Builder#store}. Checks now, before any Redlock is made, that
   * the database is supported and the table and its sequence exist. The {@link dev.redlock.Redlock}
   * then gives it its {@link dev.redlock.config.RedlockConfig#nodeTimeout() nodeTimeout}, which
   * bounds every statement (query timeout, whole seconds, at least 1) and every wait for a
   * connection from {@code dataSource} (an exhausted pool fails the operation then, naming {@code
   * nodeTimeout}, not after the pool's own wait); a ttl must exceed it. The Redlock closes the
   * store it made when it is closed; {@code dataSource} stays the application's to close.
   *
   * @param dataSource where the table is; its pool is shared with the application
   * @param table the lease table's name: a plain SQL identifier, optionally schema-qualified
   * @return what makes the store, for {@link dev.redlock.config.RedlockConfig.Builder#store}
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException for a bad table name, an unsupported database, or a missing
   *     table or sequence (the message says how to create them)
   * @throws IllegalStateException if the database cannot be reached
   */
  public static Function<Duration, LeaseStore<?>> store(DataSource dataSource, String table) {
    Objects.requireNonNull(dataSource, "dataSource must not be null");
    Objects.requireNonNull(table, "table must not be null");
    Table t = new Table(table);
    Dialect dialect = dialect(dataSource);
    checkTable(dataSource, t, dialect);
    return new TableStore(dataSource, t, dialect);
  }

  /** What {@link #store} returns: named after the table, so a config's {@code toString} says it. */
  private record TableStore(DataSource dataSource, Table table, Dialect dialect)
      implements Function<Duration, LeaseStore<?>> {
    @Override
    public LeaseStore<?> apply(Duration nodeTimeout) {
      Objects.requireNonNull(nodeTimeout, "nodeTimeout must not be null");
      return new JdbcLeaseStore(dataSource, table, dialect, nodeTimeout);
    }

    @Override
    public String toString() {
      return "JdbcLeases.store("
          + dialect.name().toLowerCase(java.util.Locale.ROOT)
          + ":"
          + table.name()
          + ")";
    }
  }

  /**
   * Creates the table, its index and its sequence if absent — the shipped schema ({@code
   * dev/redlock/jdbc/postgresql.sql}, {@code mariadb.sql}) with the table's name. For tests and
   * small deployments; elsewhere, let your migrations run the shipped SQL.
   *
   * @throws IllegalArgumentException for a bad table name or an unsupported database
   * @throws IllegalStateException if the statements fail
   */
  public static void createTableIfAbsent(DataSource dataSource, String table) {
    Objects.requireNonNull(dataSource, "dataSource must not be null");
    Table t = new Table(table);
    Dialect dialect = dialect(dataSource);
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      for (String statement : dialect.schema(t)) {
        s.execute(statement);
      }
      if (!c.getAutoCommit()) {
        c.commit();
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create " + table + ": " + e.getMessage(), e);
    }
  }

  /**
   * Starts a worker that deletes expired rows, at most {@code batchSize} per statement and one
   * statement per {@code interval} (a full batch is followed by the next one after the same pause:
   * the rate is bounded, never a sweep of the whole table at once). Off unless started; rows of
   * held leases are never touched. Close it to stop it.
   *
   * @throws IllegalArgumentException if {@code batchSize} is not 1..10,000 or {@code interval} is
   *     under 10 ms
   */
  public static CleanupWorker startCleanup(
      DataSource dataSource, String table, int batchSize, Duration interval) {
    Objects.requireNonNull(dataSource, "dataSource must not be null");
    Objects.requireNonNull(interval, "interval must not be null");
    if (batchSize < 1 || batchSize > 10_000) {
      throw new IllegalArgumentException("batchSize must be 1..10000, was " + batchSize);
    }
    if (interval.compareTo(Duration.ofMillis(10)) < 0) {
      throw new IllegalArgumentException("interval must be >= 10ms, was " + interval);
    }
    Table t = new Table(table);
    return CleanupWorker.start(dataSource, t, dialect(dataSource), batchSize, interval);
  }

  private static Dialect dialect(DataSource dataSource) {
    try (Connection c = dataSource.getConnection()) {
      return Dialect.of(c.getMetaData().getDatabaseProductName());
    } catch (SQLException e) {
      throw new IllegalStateException(
          "cannot reach the database through the DataSource: " + e.getMessage(), e);
    }
  }

  private static void checkTable(DataSource dataSource, Table t, Dialect dialect) {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.setQueryTimeout(10);
      s.executeQuery(
              "SELECT resource, owner, fencing_token, expires_at FROM " + t.name() + " WHERE 1 = 0")
          .close();
      if (!c.getAutoCommit()) {
        c.rollback();
      }
    } catch (SQLException e) {
      throw new IllegalArgumentException(
          "table "
              + t.name()
              + " is missing or not a lease table ("
              + e.getMessage()
              + "): create it with dev/redlock/jdbc/"
              + dialect.name().toLowerCase(java.util.Locale.ROOT)
              + ".sql or JdbcLeases.createTableIfAbsent",
          e);
    }
  }
}
