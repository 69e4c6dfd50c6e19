package dev.redlock.jdbc;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The SQL table's own cases: its schema and name, bad data sources, racing processes, tokens. */
abstract class JdbcTableCases extends JdbcTarget {
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
  static String lastLine(BufferedReader out, String... wanted) throws IOException {
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

  long count(String query) throws SQLException {
    try (Connection c = db.directDataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
