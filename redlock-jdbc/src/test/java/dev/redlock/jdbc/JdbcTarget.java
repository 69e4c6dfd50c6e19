package dev.redlock.jdbc;

import static org.awaitility.Awaitility.await;

import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.LeaseContract;
import dev.redlock.testkit.Tools;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

/**
 * The SQL store as a {@link LeaseContract} target: a real database server started once per class,
 * the suite's settings, and the hooks the contract asks for. Subclasses name the database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcTarget extends LeaseContract {

  Database db;
  String table;

  abstract Database.Kind kind();

  @BeforeAll
  void start() {
    db = Tools.requireOrSkip(() -> new Database(kind(), true));
    table = db.table("leases");
    JdbcLeases.createTableIfAbsent(db.dataSource(), table);
  }

  @AfterAll
  void stop() {
    if (db != null) {
      db.close();
    }
  }

  /**
   * The settings the suite's clients run with, over {@code table} of {@code dataSource}: a 1 s
   * statement timeout, short retries, and a maxTtl scaled with the ttls (a minute at factor 1).
   */
  static RedlockConfig.Builder settings(DataSource dataSource, String table) {
    return RedlockConfig.builder()
        .store(JdbcLeases.store(dataSource, table))
        .nodeTimeout(Duration.ofSeconds(1))
        .maxTtl(TIMING.scaled(RedlockConfig.DEFAULT_MAX_TTL))
        .retryDelay(Duration.ofMillis(20))
        .retryJitter(Duration.ofMillis(20));
  }

  /** A Redlock over {@code table} of {@code dataSource}, with the suite's settings. */
  static Redlock open(DataSource dataSource, String table) {
    return Redlock.create(settings(dataSource, table).build());
  }

  /** Each client is a Redlock of its own: its own pool, closed after the test's clients. */
  @Override
  protected Redlock createClient(Consumer<RedlockConfig.Builder> adjust) {
    RedlockConfig.Builder settings = settings(closeAfterClients(db.newPool()), table);
    adjust.accept(settings);
    return Redlock.create(settings.build());
  }

  @Override
  protected Duration shortTtl() {
    return TIMING.scaled(Duration.ofSeconds(4)); // renewable: ttl / 3 >= the 1 s statement timeout
  }

  /** The store's one part, as its account names it: the dialect and the table. */
  @Override
  protected List<String> nodeNames() {
    return List.of(kind().name().toLowerCase(java.util.Locale.ROOT) + ":" + table);
  }

  /** No row is left for the resource (a release deletes it, owner-checked). */
  @Override
  protected void awaitNothingKept(String resource) {
    await("no row left for " + resource).atMost(NO_HANG).until(() -> owner(resource) == null);
  }

  /** 1 if the table has an unexpired row for the resource (on the database's clock), else 0. */
  @Override
  protected long placesHolding(String resource) {
    String now = kind() == Database.Kind.POSTGRESQL ? "clock_timestamp()" : "UTC_TIMESTAMP(6)";
    try (Connection c = db.directDataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT COUNT(*) FROM " + table + " WHERE resource = ? AND expires_at > " + now)) {
      s.setString(1, resource);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not read the lease table", e);
    }
  }

  @Override
  protected void disconnect() {
    db.cut();
  }

  @Override
  protected void reconnect() {
    db.restore();
  }

  /** The owner of {@code r}'s row in the contract's table, or null. */
  String owner(String r) throws SQLException {
    try (Connection c = db.directDataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT owner FROM " + table + " WHERE resource = ?")) {
      s.setString(1, r);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
  }
}
