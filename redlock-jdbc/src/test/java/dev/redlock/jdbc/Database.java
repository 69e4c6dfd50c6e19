package dev.redlock.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redlock.testkit.MissingToolException;
import java.net.URI;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import org.netcrusher.core.reactor.NioReactor;
import org.netcrusher.tcp.TcpCrusher;
import org.netcrusher.tcp.TcpCrusherBuilder;

/**
 * A database server for the tests (PostgreSQL or MariaDB, started by {@code .ci/run} through {@code
 * .ci/databases}), reached through a TCP proxy the test can cut, with a schema (PostgreSQL) or
 * database (MariaDB) of its own that is dropped at the end. Only the proxy is ours: the server is
 * never stopped by a test.
 */
final class Database implements AutoCloseable {
  enum Kind {
    POSTGRESQL("REDLOCK_PG_URL", "jdbc:postgresql://127.0.0.1:5432/redlock_test"),
    MARIADB("REDLOCK_MARIADB_URL", "jdbc:mariadb://127.0.0.1:3306/");

    final String url;

    Kind(String env, String fallback) {
      String fromEnv = System.getenv(env);
      this.url = fromEnv == null || fromEnv.isBlank() ? fallback : fromEnv;
    }
  }

  private static final String USER = env("REDLOCK_DB_USER", "redlock");
  private static final String PASSWORD = env("REDLOCK_DB_PASSWORD", "redlock");

  final Kind kind;
  final String schema;
  private final NioReactor reactor;
  private final TcpCrusher proxy;
  private final HikariDataSource direct;
  private final HikariDataSource proxied;
  private final String viaProxy;
  private final URI server;
  private final boolean autoCommit;

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }

  /**
   * Connects, makes a schema of its own, and a proxy in front.
   *
   * @throws MissingToolException if the server cannot be reached (run .ci/databases)
   */
  Database(Kind kind, boolean autoCommit) {
    this.kind = kind;
    this.schema = "redlock_t" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 4);
    URI uri = URI.create(kind.url.substring("jdbc:".length()));
    this.server = uri;
    try {
      // The first connection of a fresh machine's database can take seconds (a cold server,
      // authentication set up a moment ago): it gets a patient timeout, not the tests' 1 s.
      this.direct = pool(kind.url, true, 8, FIRST_CONNECTION);
      try (Connection c = direct.getConnection();
          Statement s = c.createStatement()) {
        s.execute(
            kind == Kind.POSTGRESQL ? "CREATE SCHEMA " + schema : "CREATE DATABASE " + schema);
      }
    } catch (RuntimeException | SQLException e) {
      throw new MissingToolException(
          kind
              + " not reachable at "
              + kind.url
              + " as "
              + USER
              + " ("
              + e.getMessage()
              + "): run .ci/databases (as root), or set "
              + (kind == Kind.POSTGRESQL ? "REDLOCK_PG_URL" : "REDLOCK_MARIADB_URL"),
          e);
    }
    try {
      this.reactor = new NioReactor();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    int port = FreePort.next();
    this.proxy =
        TcpCrusherBuilder.builder()
            .withReactor(reactor)
            .withBindAddress("127.0.0.1", port)
            .withConnectAddress(uri.getHost(), uri.getPort())
            .buildAndOpen();
    this.viaProxy = through(port);
    this.autoCommit = autoCommit;
    this.proxied = pool(viaProxy, autoCommit);
    warmUp(proxied); // its first connection, before any test's 1 s timeout counts
  }

  /** How long a first connection may take on a fresh machine. */
  private static final Duration FIRST_CONNECTION = Duration.ofSeconds(30);

  /**
   * Opens one connection of {@code pool}, trying again (each try bounded by the pool's own timeout)
   * for up to {@link #FIRST_CONNECTION}: so the suite starts with a connection made.
   */
  private static void warmUp(HikariDataSource pool) {
    long until = System.nanoTime() + FIRST_CONNECTION.toNanos();
    while (true) {
      try {
        pool.getConnection().close(); // made, and back in the pool
        return;
      } catch (SQLException e) {
        if (System.nanoTime() - until > 0) {
          throw new IllegalStateException(
              "no first connection through the proxy in "
                  + FIRST_CONNECTION
                  + ": "
                  + e.getMessage(),
              e);
        }
      }
    }
  }

  /**
   * The library's pool. Its own wait for a connection is generous (a new connection through the
   * proxy after a cut can take more than a second on a loaded machine): the store bounds each
   * borrow by its nodeTimeout itself, and that is what the suite tests.
   */
  private static HikariDataSource pool(String url, boolean autoCommit) {
    return pool(url, autoCommit, 8, Duration.ofSeconds(10));
  }

  private static HikariDataSource pool(
      String url, boolean autoCommit, int size, Duration connectionTimeout) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(USER);
    config.setPassword(PASSWORD);
    config.setAutoCommit(autoCommit);
    config.setMaximumPoolSize(size);
    config.setConnectionTimeout(connectionTimeout.toMillis());
    config.setValidationTimeout(500);
    config.setInitializationFailTimeout(-1);
    return new HikariDataSource(config);
  }

  /** The pool the library uses: through the proxy. */
  HikariDataSource dataSource() {
    return proxied;
  }

  /** The server's JDBC URL, user and password, for another process. */
  List<String> credentials() {
    return List.of(kind.url, USER, PASSWORD);
  }

  /** A new pool through the proxy, as another service would have; the caller closes it. */
  HikariDataSource newPool() {
    return pool(viaProxy, autoCommit);
  }

  /**
   * A new pool through the proxy of at most {@code size} connections, whose {@code getConnection}
   * waits up to {@code connectionTimeout} for one; the caller closes it.
   */
  HikariDataSource newPool(int size, Duration connectionTimeout) {
    return pool(viaProxy, autoCommit, size, connectionTimeout);
  }

  /** The server's host, for a proxy of a test's own. */
  String host() {
    return server.getHost();
  }

  /** The server's port, for a proxy of a test's own. */
  int port() {
    return server.getPort();
  }

  /**
   * A new pool reaching the server through a proxy of the test's own on loopback {@code port}; the
   * caller closes it.
   */
  HikariDataSource newPoolThrough(int port) {
    return pool(through(port), autoCommit);
  }

  private String through(int port) {
    return kind.url.replace(":" + server.getPort() + "/", ":" + port + "/");
  }

  /** A pool straight to the server, for the test's own looks. */
  HikariDataSource directDataSource() {
    return direct;
  }

  /** The lease table's name, in this test's schema. */
  String table(String name) {
    return schema + "." + name;
  }

  /** Cuts every connection through the proxy and refuses new ones: the database is gone. */
  void cut() {
    if (proxy.isOpen()) {
      proxy.close();
    }
  }

  void restore() {
    if (!proxy.isOpen()) {
      proxy.open();
    }
  }

  @Override
  public void close() {
    proxied.close();
    if (proxy.isOpen()) {
      proxy.close();
    }
    reactor.close();
    try (Connection c = direct.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          kind == Kind.POSTGRESQL
              ? "DROP SCHEMA " + schema + " CASCADE"
              : "DROP DATABASE " + schema);
    } catch (SQLException e) {
      System.err.println("could not drop " + schema + ": " + e.getMessage());
    }
    direct.close();
  }

  @Override
  public String toString() {
    return kind.name().toLowerCase(Locale.ROOT) + " " + schema;
  }

  /** A free loopback port for the proxy. */
  static final class FreePort {
    static int next() {
      try (java.net.ServerSocket s =
          new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
        return s.getLocalPort();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }
}
