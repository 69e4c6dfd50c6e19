package dev.redlock.jdbc;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariDataSource;
import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.testkit.CapturedLog;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The lease contract every store keeps, plus what is the SQL table's own, on a real database
 * server: the table's cases ({@link JdbcTableCases}), and here the faults of the link and the pool
 * (unanswered commits, an exhausted pool, autocommit off) and the cleanup. Subclasses name the
 * database.
 */
abstract class JdbcLeasesContract extends JdbcTableCases {
  /**
   * A won acquisition whose commit goes unanswered (issue 13, item 4): the server commits the row,
   * the proxy withholds the answer and then cuts the link. The attempt counts as failed, so the row
   * is deleted (owner-checked) on another connection at once, and the log says so, naming the
   * resource and never the owner token.
   */
  @Test
  void anUnansweredCommitDeletesTheRowItMayHaveWrittenAndSaysSo() throws Exception {
    String r = resource("unanswered");
    try (CommitProxy proxy = new CommitProxy(db.host(), db.port());
        HikariDataSource pool = db.newPoolThrough(proxy.port());
        Redlock a = open(pool, table);
        CapturedLog log = new CapturedLog()) {
      String owner = loseTheAnswerToACommit(proxy, a, r, false);
      assertEquals(null, owner(r), "the row it wrote is deleted before the attempt returns");
      List<String> warnings = warnings(log, r);
      assertEquals(1, warnings.size(), warnings.toString());
      assertTrue(warnings.get(0).endsWith("; the row it wrote is deleted"), warnings.toString());
      assertFalse(log.text().contains(owner), "the owner token never reaches the log");
      await().atMost(NO_HANG).until(() -> pool.getHikariPoolMXBean().getActiveConnections() == 0);
      client().tryAcquire(r, Duration.ofSeconds(10)).orElseThrow().release();
    }
  }

  /**
   * The same, with the database gone for good once the commit went unanswered: the row cannot be
   * deleted, so the log says it may be held until its ttl, and it is, then it expires.
   */
  @Test
  void anUnansweredCommitWhoseRowCannotBeDeletedSaysItMayBeHeldUntilItsTtl() throws Exception {
    String r = resource("unanswered-gone");
    try (CommitProxy proxy = new CommitProxy(db.host(), db.port());
        HikariDataSource pool = db.newPoolThrough(proxy.port());
        Redlock a = open(pool, table);
        CapturedLog log = new CapturedLog()) {
      String owner = loseTheAnswerToACommit(proxy, a, r, true);
      assertEquals(owner, owner(r), "nobody could delete the row");
      List<String> warnings = warnings(log, r);
      assertEquals(1, warnings.size(), warnings.toString());
      assertTrue(
          warnings
              .get(0)
              .contains(
                  "; its row may be held until its ttl (" + shortTtl().toMillis() + " ms) ends"),
          warnings.toString());
      assertFalse(log.text().contains(owner), "the owner token never reaches the log");
      await().atMost(NO_HANG).until(() -> pool.getHikariPoolMXBean().getActiveConnections() == 0);
      Redlock b = client();
      assertTrue(b.tryAcquire(r, Duration.ofSeconds(10)).isEmpty(), "held until its ttl");
      b.acquire(r, Duration.ofSeconds(10), NO_HANG).release(); // then it expires
    }
  }

  /**
   * Makes {@code a} try {@code r} with the proxy armed: waits until the server has committed the
   * row (seen from a direct connection) while the answer is withheld, then cuts the link (or, with
   * {@code gone}, every link for good). Returns the owner token the row was committed with, after
   * checking that the attempt failed.
   */
  private String loseTheAnswerToACommit(CommitProxy proxy, Redlock a, String r, boolean gone)
      throws Exception {
    ExecutorService background = Executors.newSingleThreadExecutor();
    try {
      proxy.arm();
      Future<Optional<Lease>> attempt = background.submit(() -> a.tryAcquire(r, shortTtl()));
      CommitProxy.Link link = proxy.withheld(NO_HANG);
      await().atMost(NO_HANG).until(() -> owner(r) != null);
      String owner = owner(r);
      assertFalse(attempt.isDone(), "the client has not heard back");
      if (gone) {
        proxy.cutAll();
      } else {
        link.cut();
      }
      ExecutionException failed =
          assertThrows(
              ExecutionException.class, () -> attempt.get(NO_HANG.toSeconds(), TimeUnit.SECONDS));
      LockUnavailableException e = (LockUnavailableException) failed.getCause();
      assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason(), e.toString());
      return owner;
    } finally {
      background.shutdownNow();
    }
  }

  private static List<String> warnings(CapturedLog log, String r) {
    return log.lines(
        "WARN dev.redlock.jdbc.JdbcLeaseStore - acquire of '" + r + "' counts as failed");
  }

  /**
   * A pool with no connection to give (issue 13, item 4): one connection, taken by the test, and a
   * pool that would wait 30 s for it. An attempt, an extension and a release each give up at the 1
   * s timeout the statements have, and say so naming it; once the connection is back, nothing is
   * left borrowed, and no thread of the store outlives it.
   */
  @Test
  void anExhaustedPoolDelaysNoOperationPastTheTimeout() throws Exception {
    String r = resource("exhausted");
    // Well past 1 s, well short of the pool's 30 s (both scaled).
    Duration bound = TIMING.scaled(Duration.ofSeconds(10));
    HikariDataSource pool = closeAfterClients(db.newPool(1, TIMING.scaled(Duration.ofSeconds(30))));
    try (CapturedLog log = new CapturedLog()) {
      try (Redlock a = open(pool, table)) {
        Lease held = a.acquire(r, Duration.ofSeconds(10), NO_HANG);
        try (Connection taken = pool.getConnection()) {
          assertTrue(taken.isValid(1), "the test holds the pool's only connection");
          LockUnavailableException e =
              assertTimeoutPreemptively(
                  bound,
                  () ->
                      assertThrows(
                          LockUnavailableException.class,
                          () -> a.tryAcquire(resource("exhausted-2"), Duration.ofSeconds(10))));
          assertTrue(e.getMessage().contains(NO_CONNECTION), e.getMessage());
          assertEquals(NodeOutcome.Status.TIMED_OUT, e.nodeOutcomes().get(0).status());
          assertFalse(assertTimeoutPreemptively(bound, () -> held.extend(Duration.ofSeconds(10))));
          assertTimeoutPreemptively(bound, held::release);
        }
        List<String> warnings = log.lines("release of '" + r + "' failed");
        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains(NO_CONNECTION), warnings.toString());
        await().atMost(NO_HANG).until(() -> pool.getHikariPoolMXBean().getActiveConnections() == 0);
      }
      await().atMost(NO_HANG).until(() -> connectors().isEmpty());
    }
  }

  /**
   * A DataSource that answers only after the caller gave up, deaf to interrupts: the attempt fails
   * at the timeout, and the connection that comes later is closed at once, not leaked.
   */
  @Test
  void aConnectionThatComesAfterTheTimeoutIsClosedNotLeaked() throws Exception {
    HikariDataSource pool = closeAfterClients(db.newPool());
    GatedDataSource gated = new GatedDataSource(pool);
    try (Redlock a = open(gated, table)) {
      gated.shut();
      try {
        LockUnavailableException e =
            assertTimeoutPreemptively(
                TIMING.scaled(Duration.ofSeconds(10)),
                () ->
                    assertThrows(
                        LockUnavailableException.class,
                        () -> a.tryAcquire(resource("late"), Duration.ofSeconds(10))));
        assertTrue(e.getMessage().contains(NO_CONNECTION), e.getMessage());
        assertEquals(1, gated.waiting(), "the store's thread is still waiting, deaf");
      } finally {
        gated.open();
      }
      await()
          .atMost(NO_HANG)
          .until(
              () -> gated.waiting() == 0 && pool.getHikariPoolMXBean().getActiveConnections() == 0);
    }
    await().atMost(NO_HANG).until(() -> connectors().isEmpty());
  }

  private static final String NO_CONNECTION =
      "no connection from the DataSource within nodeTimeout (1000 ms)";

  /** The store's threads that wait on a DataSource, alive now. */
  private static List<Thread> connectors() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith("redlock-jdbc-connect-"))
        .toList();
  }

  @Test
  void aPoolWithAutocommitOffWorksTheSame() throws Exception {
    try (Database manual = new Database(kind(), false)) {
      String t = manual.table("leases");
      JdbcLeases.createTableIfAbsent(manual.dataSource(), t);
      try (Redlock a = open(manual.dataSource(), t);
          Redlock b = open(manual.dataSource(), t)) {
        Lease lease = a.acquire("manual", Duration.ofSeconds(10), NO_HANG);
        assertTrue(b.tryAcquire("manual", Duration.ofSeconds(10)).isEmpty(), "committed");
        assertTrue(lease.extend(Duration.ofSeconds(10)));
        lease.release();
        b.acquire("manual", Duration.ofSeconds(10), NO_HANG).release();
      }
    }
  }

  @Test
  void cleanupDeletesOnlyExpiredRowsInBatchesOfItsSize() throws Exception {
    String t = db.table("cleaned");
    JdbcLeases.createTableIfAbsent(db.dataSource(), t);
    boolean pg = kind() == Database.Kind.POSTGRESQL;
    String past =
        pg ? "clock_timestamp() - interval '1 hour'" : "UTC_TIMESTAMP(6) - INTERVAL 1 HOUR";
    String future =
        pg ? "clock_timestamp() + interval '1 hour'" : "UTC_TIMESTAMP(6) + INTERVAL 1 HOUR";
    try (Connection c = db.directDataSource().getConnection();
        Statement s = c.createStatement()) {
      for (int i = 0; i < 7; i++) {
        s.execute(
            "INSERT INTO "
                + t
                + " (resource, owner, fencing_token, expires_at) VALUES ('r"
                + i
                + "', 'o', "
                + i
                + ", "
                + (i < 5 ? past : future)
                + ")");
      }
    }
    try (CleanupWorker worker =
        JdbcLeases.startCleanup(db.dataSource(), t, 2, Duration.ofMillis(50))) {
      await().atMost(NO_HANG).until(() -> worker.deleted() == 5);
      assertTrue(worker.batches() >= 3, "5 rows in batches of 2: " + worker.batches());
    }
    assertEquals(List.of("r5", "r6"), resources(t), "the valid leases stay");
    assertThrows(
        IllegalArgumentException.class,
        () -> JdbcLeases.startCleanup(db.dataSource(), t, 0, Duration.ofSeconds(1)));
  }

  private List<String> resources(String t) throws SQLException {
    List<String> names = new ArrayList<>();
    try (Connection c = db.directDataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT resource FROM " + t + " ORDER BY resource")) {
      while (rs.next()) {
        names.add(rs.getString(1));
      }
    }
    return names;
  }
}
