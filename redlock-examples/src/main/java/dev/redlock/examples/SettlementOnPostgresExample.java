package dev.redlock.examples;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.jdbc.JdbcLeases;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The settlement example on PostgreSQL, without Redis: four workers, each a service with its own
 * connection pool (HikariCP) and {@link Redlock} over the table ({@link JdbcLeases#store}), settle
 * the entries of one ledger held in the same database. The lock is a row in {@code redlock_leases};
 * each settlement is written with the lease's fencing token, and the write refuses a token older
 * than the ledger's newest, so even a holder that stalled past its lease could not settle twice.
 *
 * <p>Needs a PostgreSQL server: {@code sudo .ci/databases} starts Debian's and creates the user; or
 * set {@code REDLOCK_PG_URL} (and {@code REDLOCK_DB_USER}, {@code REDLOCK_DB_PASSWORD}).
 *
 * <p>Exit status: 0 when every entry was settled exactly once, 1 otherwise.
 */
public final class SettlementOnPostgresExample {
  static final String RESOURCE = "ledger:2026-11-30";

  private final PrintStream out;
  private final String url;
  private final String user;
  private final String password;
  private final int entries;
  private final AtomicBoolean inside = new AtomicBoolean();
  private final AtomicInteger overlaps = new AtomicInteger();

  SettlementOnPostgresExample(
      PrintStream out, String url, String user, String password, int entries) {
    this.out = out;
    this.url = url;
    this.user = user;
    this.password = password;
    this.entries = entries;
  }

  public static void main(String[] args) throws Exception {
    String url = env("REDLOCK_PG_URL", "jdbc:postgresql://127.0.0.1:5432/redlock_test");
    boolean ok =
        new SettlementOnPostgresExample(
                System.out,
                url,
                env("REDLOCK_DB_USER", "redlock"),
                env("REDLOCK_DB_PASSWORD", "redlock"),
                24)
            .run(4);
    System.exit(ok ? 0 : 1);
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }

  private HikariDataSource pool() {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword(password);
    config.setMaximumPoolSize(4);
    config.setConnectionTimeout(2_000);
    return new HikariDataSource(config);
  }

  /** Runs the settlement; true if every entry was settled exactly once. */
  boolean run(int workers) throws Exception {
    try (HikariDataSource admin = pool()) {
      JdbcLeases.createTableIfAbsent(admin, "redlock_leases");
      try (Connection c = admin.getConnection();
          Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS example_ledger");
        s.execute(
            "CREATE TABLE example_ledger (entry INT PRIMARY KEY, settled_by TEXT, fence BIGINT)");
        s.execute("INSERT INTO example_ledger (entry) SELECT generate_series(1, " + entries + ")");
      }
      out.println("ledger of " + entries + " entries; " + workers + " workers on " + url);
      ExecutorService threads = Executors.newFixedThreadPool(workers);
      List<Future<Integer>> done = new ArrayList<>();
      for (int w = 1; w <= workers; w++) {
        String name = "worker-" + w;
        done.add(threads.submit(() -> work(name)));
      }
      int total = 0;
      for (Future<Integer> f : done) {
        total += f.get(2, TimeUnit.MINUTES);
      }
      threads.shutdown();
      return verdict(admin, total);
    }
  }

  /** One service: its own pool and Redlock; settles entries while there are any. */
  private int work(String name) throws Exception {
    int mine = 0;
    try (HikariDataSource dataSource = pool();
        Redlock locks =
            Redlock.create(
                RedlockConfig.builder()
                    .store(JdbcLeases.store(dataSource, "redlock_leases"))
                    .nodeTimeout(Duration.ofSeconds(1))
                    .build())) {
      while (true) {
        Integer settled =
            locks.withLock(
                RESOURCE,
                Duration.ofSeconds(10),
                Duration.ofSeconds(30),
                lease -> settleNext(dataSource, name, lease));
        if (settled == null) {
          return mine;
        }
        mine++;
      }
    }
  }

  /**
   * Under the lock: settle the lowest open entry with our fencing token; null when none is left.
   */
  private Integer settleNext(HikariDataSource dataSource, String name, Lease lease)
      throws SQLException {
    if (!inside.compareAndSet(false, true)) {
      overlaps.incrementAndGet();
    }
    try (Connection c = dataSource.getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "UPDATE example_ledger SET settled_by = ?, fence = ?"
                    + " WHERE entry = (SELECT min(entry) FROM example_ledger WHERE settled_by IS NULL)"
                    + " AND ? >= (SELECT coalesce(max(fence), 0) FROM example_ledger)"
                    + " RETURNING entry")) {
      lease.checkValid(); // right before the side effect
      s.setString(1, name);
      s.setLong(2, lease.fencingToken());
      s.setLong(3, lease.fencingToken());
      try (ResultSet rs = s.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        out.println(
            name + " settled entry " + rs.getInt(1) + " with token " + lease.fencingToken());
        return rs.getInt(1);
      }
    } finally {
      inside.set(false);
    }
  }

  private boolean verdict(HikariDataSource admin, int total) throws SQLException {
    try (Connection c = admin.getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FILTER (WHERE settled_by IS NOT NULL), count(*) FROM example_ledger")) {
      rs.next();
      int settled = rs.getInt(1);
      int all = rs.getInt(2);
      boolean ok = settled == all && total == all && overlaps.get() == 0;
      out.println(
          (ok ? "OK" : "FAILED")
              + ": "
              + settled
              + " of "
              + all
              + " entries settled, "
              + total
              + " settlements, "
              + overlaps.get()
              + " overlapping critical sections");
      return ok;
    }
  }
}
