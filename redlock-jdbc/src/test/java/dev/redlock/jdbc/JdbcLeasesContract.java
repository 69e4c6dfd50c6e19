package dev.redlock.jdbc;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.CapturedLog;
import dev.redlock.testkit.LeaseContract;
import dev.redlock.testkit.Tools;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
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
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lease contract every store keeps, plus what is the SQL table's own (schema, cleanup, bad
 * input), on a real database server. Subclasses name the database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcLeasesContract extends LeaseContract {

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

  // ---- the table's own

  @Test
  void creatingTheTableTwiceIsHarmless() {
    JdbcLeases.createTableIfAbsent(db.dataSource(), table);
  }

  /** The store goes through the one config: it names the table, and there are no nodes. */
  @Test
  void aConfigWithTheTableNamesItAndHasNoNodes() {
    RedlockConfig config = settings(db.dataSource(), table).build();
    assertTrue(
        config
            .toString()
            .startsWith("RedlockConfig{store=JdbcLeases.store(" + nodeNames().get(0) + ")"),
        config.toString());
    assertEquals(List.of(), config.nodes());
    try (Redlock redlock = Redlock.create(config)) {
      assertEquals(java.util.Map.of(), redlock.requestsInFlight());
      assertTrue(
          redlock.toString().startsWith("Redlock{store=JdbcLeases.store("), redlock.toString());
    }
  }

  @Test
  void aMissingTableIsAClearErrorThatSaysHowToCreateIt() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> JdbcLeases.store(db.dataSource(), db.table("nope")));
    assertTrue(
        e.getMessage().startsWith("table " + db.table("nope") + " is missing"), e.getMessage());
    assertTrue(e.getMessage().contains("createTableIfAbsent"), e.getMessage());
  }

  @Test
  void aTableNameThatIsNotAPlainIdentifierIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> JdbcLeases.store(db.dataSource(), "leases; DROP TABLE x"));
    assertTrue(e.getMessage().startsWith("table must be a plain SQL identifier"), e.getMessage());
    assertThrows(NullPointerException.class, () -> JdbcLeases.store(null, table));
    assertThrows(NullPointerException.class, () -> JdbcLeases.store(db.dataSource(), null));
  }

  @Test
  void aDataSourceThatCannotConnectIsAClearError() {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(
        kind() == Database.Kind.POSTGRESQL
            ? "jdbc:postgresql://127.0.0.1:1/none"
            : "jdbc:mariadb://127.0.0.1:1/none");
    config.setConnectionTimeout(500);
    config.setInitializationFailTimeout(-1);
    try (HikariDataSource nowhere = new HikariDataSource(config)) {
      IllegalStateException e =
          assertThrows(IllegalStateException.class, () -> JdbcLeases.store(nowhere, table));
      assertTrue(e.getMessage().startsWith("cannot reach the database"), e.getMessage());
    }
  }

  /** The seed's scenario with real processes: two JVMs race for one resource; one wins. */
  @Test
  void twoProcessesRacingForOneResourceExactlyOneWins(@TempDir Path dir) throws Exception {
    Path go = dir.resolve("go");
    Path done = dir.resolve("done");
    List<Process> racers = new ArrayList<>();
    List<BufferedReader> outputs = new ArrayList<>();
    try {
      for (int i = 0; i < 2; i++) {
        List<String> command =
            new ArrayList<>(
                List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-cp",
                    System.getProperty("java.class.path"),
                    Racer.class.getName()));
        command.addAll(db.credentials());
        command.addAll(List.of(table, resource("processes"), go.toString(), done.toString()));
        Process p =
            new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        racers.add(p);
        outputs.add(
            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
      }
      for (BufferedReader out : outputs) {
        assertEquals("READY", lastLine(out, "READY"));
      }
      Files.writeString(go, ""); // both start their attempt now
      int won = 0;
      for (BufferedReader out : outputs) {
        String verdict = lastLine(out, "WON", "LOST");
        won += verdict.equals("WON") ? 1 : 0;
      }
      Files.writeString(done, "");
      for (Process p : racers) {
        assertTrue(
            p.waitFor(TIMING.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS),
            "the racer exits");
        assertEquals(0, p.exitValue());
      }
      assertEquals(1, won, "exactly one of two processes wins");
    } finally {
      racers.forEach(Process::destroyForcibly);
    }
  }

  /** Reads lines (bounded by the process: it exits or answers) until one of {@code wanted}. */
  private static String lastLine(BufferedReader out, String... wanted) throws IOException {
    for (String line = out.readLine(); line != null; line = out.readLine()) {
      for (String w : wanted) {
        if (line.equals(w)) {
          return line;
        }
      }
    }
    throw new AssertionError("the racer ended without saying " + List.of(wanted));
  }

  @Test
  void fencingTokensGrowAcrossResourcesFromTheSequence() throws Exception {
    Redlock a = client();
    List<Long> tokens = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      try (Lease lease = a.acquire(resource("seq" + i), Duration.ofSeconds(10), NO_HANG)) {
        tokens.add(lease.fencingToken());
      }
    }
    for (int i = 1; i < tokens.size(); i++) {
      assertTrue(tokens.get(i) > tokens.get(i - 1), tokens.toString());
    }
  }

  /**
   * The fencing token is drawn once the row is won, not in the upsert's {@code VALUES} (issue 13,
   * item 4). Attempt A is stopped inside its upsert after the {@code VALUES} were computed and
   * before the conflict check, by a {@code BEFORE INSERT} trigger of this test's own that waits for
   * a lock the test holds (an advisory lock on PostgreSQL, a user lock on MariaDB); meanwhile B is
   * granted the resource and releases it, then A goes on and wins the free row. A token drawn in
   * the {@code VALUES} came from the sequence before B's and is smaller; a token drawn once the row
   * is won is larger. The order is forced, not timed: A is seen waiting on the lock (in {@code
   * pg_locks}, in the process list) before B starts, only attempts made while the gate is up stop
   * at it (B's is made after it is down), B has released before the lock is let go, and A's 30 s
   * statement timeout only bounds the wait.
   */
  @Test
  void aTokenIsDrawnOnceTheRowIsWonSoAStalledUpsertNeverWinsWithAnOlderOne() throws Exception {
    boolean pg = kind() == Database.Kind.POSTGRESQL;
    String t = db.table("stalled");
    JdbcLeases.createTableIfAbsent(db.dataSource(), t);
    String r = resource("stalled");
    int key = db.schema.hashCode(); // advisory keys and user-lock names are server-wide
    String armed = db.schema + "_armed";
    String hold = db.schema + "_hold";

    ExecutorService background = Executors.newSingleThreadExecutor();
    try (Connection lock = db.directDataSource().getConnection();
        Statement s = lock.createStatement();
        Redlock a =
            Redlock.create(
                RedlockConfig.builder()
                    .store(JdbcLeases.store(closeAfterClients(db.newPool()), t))
                    .nodeTimeout(Duration.ofSeconds(30))
                    .build());
        Redlock b = open(closeAfterClients(db.newPool()), t)) {
      if (pg) {
        s.execute("CREATE TABLE " + t + "_gate (up BOOLEAN)");
        s.execute(
            "CREATE FUNCTION "
                + t
                + "_stall() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " IF EXISTS (SELECT 1 FROM "
                + t
                + "_gate) THEN PERFORM pg_advisory_xact_lock_shared(4242, "
                + key
                + "); END IF; RETURN NEW; END $$");
        s.execute(
            "CREATE TRIGGER stall BEFORE INSERT ON "
                + t
                + " FOR EACH ROW EXECUTE FUNCTION "
                + t
                + "_stall()");
        s.execute("INSERT INTO " + t + "_gate VALUES (true)");
        s.execute("SELECT pg_advisory_lock(4242, " + key + ")");
      } else {
        // A user lock, not a gate row: reads in a trigger take InnoDB row locks, and would
        // block B's attempt behind A's.
        s.execute(
            "CREATE TRIGGER "
                + t
                + "_stall BEFORE INSERT ON "
                + t
                + " FOR EACH ROW BEGIN IF IS_USED_LOCK('"
                + armed
                + "') IS NOT NULL THEN SET @held = GET_LOCK('"
                + hold
                + "', 60); SET @held = RELEASE_LOCK('"
                + hold
                + "'); END IF; END");
        s.execute("SELECT GET_LOCK('" + armed + "', 10), GET_LOCK('" + hold + "', 10)");
      }
      try {
        Future<Optional<Lease>> stalled =
            background.submit(() -> a.tryAcquire(r, Duration.ofSeconds(50)));
        String waiting =
            pg
                ? "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                    + " AND classid = 4242 AND objid = "
                    + Integer.toUnsignedString(key)
                : "SELECT COUNT(*) FROM information_schema.PROCESSLIST"
                    + " WHERE STATE = 'User lock' AND INFO LIKE '%"
                    + hold
                    + "%'";
        await().atMost(NO_HANG).until(() -> count(waiting) == 1);
        s.execute(pg ? "DELETE FROM " + t + "_gate" : "SELECT RELEASE_LOCK('" + armed + "')");
        long granted;
        try (Lease meanwhile = b.acquire(r, Duration.ofSeconds(10), NO_HANG)) {
          granted = meanwhile.fencingToken();
        }
        s.execute(
            pg
                ? "SELECT pg_advisory_unlock(4242, " + key + ")"
                : "SELECT RELEASE_LOCK('" + hold + "')");
        Lease late =
            stalled
                .get(NO_HANG.toSeconds(), TimeUnit.SECONDS)
                .orElseThrow(() -> new AssertionError("the row was free when A went on"));
        long token = late.fencingToken();
        late.release();
        assertTrue(
            token > granted,
            "the stalled attempt won with token "
                + token
                + ", after a lease granted meanwhile with "
                + granted);
      } finally {
        s.execute(pg ? "SELECT pg_advisory_unlock_all()" : "SELECT RELEASE_ALL_LOCKS()");
      }
    } finally {
      background.shutdownNow();
    }
  }

  private long count(String query) throws SQLException {
    try (Connection c = db.directDataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }

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

  /** The owner of {@code r}'s row in the contract's table, or null. */
  private String owner(String r) throws SQLException {
    try (Connection c = db.directDataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT owner FROM " + table + " WHERE resource = ?")) {
      s.setString(1, r);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getString(1) : null;
      }
    }
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
