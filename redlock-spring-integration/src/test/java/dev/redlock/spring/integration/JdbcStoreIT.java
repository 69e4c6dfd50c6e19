package dev.redlock.spring.integration;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.jdbc.JdbcLeases;
import dev.redlock.spring.integration.Apps.Instance;
import dev.redlock.testkit.MissingToolException;
import dev.redlock.testkit.Timing;
import dev.redlock.testkit.Tools;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The same registry over the SQL store: two applications whose Redlocks keep their leases in one
 * table of the real PostgreSQL that {@code .ci/databases} starts (in a schema of this test's own,
 * dropped after it). The registry does not know which store it is on; this checks that it need not.
 * Skipped, or failed under {@code CI=true}, when PostgreSQL is not reachable.
 */
class JdbcStoreIT {
  static final String URL = env("REDLOCK_PG_URL", "jdbc:postgresql://127.0.0.1:5432/redlock_test");
  static final String USER = env("REDLOCK_DB_USER", "redlock");
  static final String PASSWORD = env("REDLOCK_DB_PASSWORD", "redlock");
  static final Timing timing = Timing.get();
  static final String KEY = "payouts:2026-12-01";

  private String schema;
  private ConfigurableApplicationContext appA;
  private ConfigurableApplicationContext appB;

  static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }

  static void execute(String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(URL, USER, PASSWORD);
        Statement s = c.createStatement()) {
      s.execute(sql);
    }
  }

  @BeforeEach
  void twoApplicationsOverOneTable() {
    String name = "redlock_si" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 4);
    schema =
        Tools.requireOrSkip(
            () -> {
              try {
                execute("CREATE SCHEMA " + name);
                return name;
              } catch (SQLException e) {
                throw new MissingToolException(
                    "PostgreSQL not reachable at "
                        + URL
                        + " (run .ci/databases): "
                        + e.getMessage(),
                    e);
              }
            });
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setURL(URL + (URL.contains("?") ? "&" : "?") + "currentSchema=" + schema);
    dataSource.setUser(USER);
    dataSource.setPassword(PASSWORD);
    JdbcLeases.createTableIfAbsent(dataSource, "si_leases");
    Duration ttl = Duration.ofSeconds(5);
    appA = Apps.start(new Instance("a", List.of(), JdbcLeases.store(dataSource, "si_leases"), ttl));
    appB = Apps.start(new Instance("b", List.of(), JdbcLeases.store(dataSource, "si_leases"), ttl));
  }

  @AfterEach
  void dropIt() throws SQLException {
    if (appB != null) {
      appB.close();
    }
    if (appA != null) {
      appA.close();
    }
    if (schema != null) {
      execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  @Test
  void theRegistryKeepsItsContractOverTheSqlStore() throws Exception {
    RedlockLockRegistry a = appA.getBean(RedlockLockRegistry.class);
    RedlockLockRegistry b = appB.getBean(RedlockLockRegistry.class);
    assertEquals(List.of(), appA.getBean(Redlock.class).config().nodes(), "no Redis node");

    RedlockLock lock = a.obtain(KEY);
    lock.lock();
    long first = lock.fencingToken();
    assertTrue(lock.tryLock(timing.noHang(), Duration.ofSeconds(5)), "reentrant");
    assertFalse(b.obtain(KEY).tryLock(), "held by the other application");
    lock.unlock();
    assertFalse(b.obtain(KEY).tryLock(), "held until the last unlock");
    a.renewLock(KEY);
    lock.unlock();

    RedlockLock other = b.obtain(KEY);
    assertTrue(other.tryLock(timing.noHang(), Duration.ofSeconds(5)), "released");
    assertTrue(other.fencingToken() > first, first + " then " + other.fencingToken());
    other.unlock();

    lock.lock(Duration.ofMillis(1500));
    Lease lost = lock.lease();
    await().atMost(timing.noHang()).until(() -> !lost.isValid());
    assertTrue(other.tryLock(timing.noHang(), Duration.ofSeconds(5)), "taken after the ttl");
    assertThrows(ConcurrentModificationException.class, lock::unlock);
    assertFalse(a.obtain(KEY).tryLock(), "the late unlock left the next holder's row alone");
    other.unlock();
  }
}
