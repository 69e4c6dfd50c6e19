package dev.redlock.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.testkit.PostgresSchema;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * {@code redlock.store=jdbc}: leases in a table of the application's own DataSource (Boot's
 * auto-configured pool), on the real PostgreSQL that {@code .ci/databases} starts, in a schema of
 * this test's own that is dropped after it.
 */
class JdbcStoreIT {
  private PostgresSchema schema;

  @BeforeEach
  void schemaOfItsOwn() {
    schema = PostgresSchema.create("redlock_s");
  }

  @AfterEach
  void dropIt() throws SQLException {
    if (schema == null) {
      return; // skipped: no database, no schema
    }
    schema.close();
  }

  ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceAutoConfiguration.class, RedlockAutoConfiguration.class))
        .withPropertyValues(
            "spring.datasource.url=" + schema.url(),
            "spring.datasource.username=" + PostgresSchema.USER,
            "spring.datasource.password=" + PostgresSchema.PASSWORD,
            "redlock.store=jdbc",
            "redlock.jdbc.table=settlement_leases",
            "redlock.jdbc.create-table=true",
            "redlock.jdbc.timeout=1s", // the jobs' ttl of 5s renews at 1s: it must fit
            "redlock.max-hold=10m")
        .withBean(Jobs.class);
  }

  @Test
  void lockedMethodsTakeTheirLeasesInATableOfTheApplicationsDataSource() {
    runner()
        .run(
            context -> {
              Redlock locks = context.getBean(Redlock.class);
              assertEquals(List.of(), locks.config().nodes(), "the SQL store: " + locks);
              assertTrue(
                  locks
                      .toString()
                      .startsWith("Redlock{store=redlock.store=jdbc (table settlement_leases)"),
                  locks.toString());
              assertEquals(Duration.ofSeconds(1), locks.config().nodeTimeout());
              assertEquals(0, context.getBeanNamesForType(RedlockHealthIndicator.class).length);
              Jobs jobs = context.getBean(Jobs.class);
              long first = jobs.token("jdbc");
              long second = jobs.token("jdbc");
              assertTrue(first > 0 && second > first, first + " then " + second);
              jobs.duringSettle(
                  () ->
                      assertEquals(
                          1, rows(context.getBean(DataSource.class), "settlement:2026-12-01")));
              assertEquals(
                  "settlement:2026-12-01", jobs.settle(java.time.LocalDate.of(2026, 12, 1)));
              try (Lease held = locks.acquire("busy", Duration.ofSeconds(10), Duration.ZERO)) {
                assertTrue(held.isValid());
                assertInstanceOf(
                    LockUnavailableException.class,
                    assertThrows(LockUnavailableException.class, jobs::throwsWhenBusy));
              }
              assertEquals("ran", jobs.throwsWhenBusy());
            });
  }

  /** A transactional job: what it saw of the lock when its transaction completed. */
  public static class TransactionalJob {
    private volatile boolean lockedAtCompletion;

    @Locked(resource = "tx", ttl = "5s")
    @Transactional
    public void run() {
      TransactionSynchronizationManager.registerSynchronization(
          new TransactionSynchronization() {
            @Override
            public void afterCompletion(int status) {
              lockedAtCompletion = CurrentLease.find().isPresent();
            }
          });
    }

    public boolean lockedAtCompletion() {
      return lockedAtCompletion;
    }
  }

  @Test
  void aTransactionalMethodCommitsInsideTheLock() {
    runner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceTransactionManagerAutoConfiguration.class,
                TransactionAutoConfiguration.class))
        .withBean(TransactionalJob.class)
        .run(
            context -> {
              TransactionalJob job = context.getBean(TransactionalJob.class);
              job.run();
              assertTrue(job.lockedAtCompletion(), "the commit ran before the lock's release");
            });
  }

  @Test
  void aMissingTableSaysHowToCreateIt() {
    runner()
        .withPropertyValues("redlock.jdbc.create-table=false")
        .run(
            context -> {
              Throwable failure = context.getStartupFailure();
              assertTrue(failure != null, "started without a table");
              StringBuilder messages = new StringBuilder();
              for (Throwable t = failure; t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
              }
              assertTrue(
                  messages.toString().contains("table settlement_leases is missing"),
                  messages.toString());
            });
  }

  static int rows(DataSource dataSource, String resource) {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet r =
            s.executeQuery(
                "SELECT count(*) FROM settlement_leases WHERE resource = '"
                    + resource
                    + "' AND expires_at > clock_timestamp()")) {
      r.next();
      return r.getInt(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
