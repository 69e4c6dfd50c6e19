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
import dev.redlock.testkit.PostgresSchema;
import dev.redlock.testkit.Timing;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.List;
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
  static final Timing timing = Timing.get();
  static final String KEY = "payouts:2026-12-01";

  private PostgresSchema schema;
  private ConfigurableApplicationContext appA;
  private ConfigurableApplicationContext appB;

  @BeforeEach
  void twoApplicationsOverOneTable() {
    schema = PostgresSchema.create("redlock_si");
    PGSimpleDataSource dataSource = new PGSimpleDataSource();
    dataSource.setURL(schema.url());
    dataSource.setUser(PostgresSchema.USER);
    dataSource.setPassword(PostgresSchema.PASSWORD);
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
      schema.close();
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
