package dev.redlock.testkit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A schema of one test's own on the PostgreSQL the SQL tests use ({@code .ci/databases} starts it;
 * {@code REDLOCK_PG_URL}, {@code REDLOCK_DB_USER} and {@code REDLOCK_DB_PASSWORD} point elsewhere),
 * dropped with all it holds by {@link #close()}. The PostgreSQL JDBC driver must be on the test
 * class path.
 *
 * <pre>{@code
 * try (PostgresSchema schema = PostgresSchema.create("orders")) {
 *   dataSource.setURL(schema.url());
 *   ...
 * }
 * }</pre>
 */
public final class PostgresSchema implements AutoCloseable {
  /** The database's JDBC URL, without a schema. */
  public static final String URL =
      env("REDLOCK_PG_URL", "jdbc:postgresql://127.0.0.1:5432/redlock_test");

  /** The test user. */
  public static final String USER = env("REDLOCK_DB_USER", "redlock");

  /** The test user's password. */
  public static final String PASSWORD = env("REDLOCK_DB_PASSWORD", "redlock");

  private final String name;

  private PostgresSchema(String name) {
    this.name = name;
  }

  /**
   * Creates a schema named {@code prefix} and random hex digits.
   *
   * @param prefix the start of the name: lower-case letters, digits and underscores
   * @throws org.opentest4j.TestAbortedException (a skip) if PostgreSQL is not reachable; under
   *     {@code CI=true} an {@link AssertionError} instead
   */
  public static PostgresSchema create(String prefix) {
    String name = prefix + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 4);
    return Tools.requireOrSkip(
        () -> {
          try {
            execute("CREATE SCHEMA " + name);
            return new PostgresSchema(name);
          } catch (SQLException e) {
            throw new MissingToolException(
                "PostgreSQL not reachable at " + URL + " (run .ci/databases): " + e.getMessage(),
                e);
          }
        });
  }

  /** The schema's name. */
  public String name() {
    return name;
  }

  /** The JDBC URL whose connections work in this schema. */
  public String url() {
    return URL + (URL.contains("?") ? "&" : "?") + "currentSchema=" + name;
  }

  /** Runs one statement as the test user, outside any schema of a test. */
  public static void execute(String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(URL, USER, PASSWORD);
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  /** Drops the schema and everything in it. */
  @Override
  public void close() throws SQLException {
    execute("DROP SCHEMA IF EXISTS " + name + " CASCADE");
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }
}
