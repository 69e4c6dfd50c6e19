package dev.redlock.examples;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisNodes;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Fencing on the SQL side: the ledger row keeps the token of its last writer, and an update only
 * applies if it carries a newer one ({@code ... WHERE fence < ?}). Holder A pauses past its lease
 * (a "GC pause"), B takes the lock and writes, then A wakes up and tries to write with its old
 * token: zero rows updated, and A learns it no longer holds the lock.
 *
 * <p>Run: {@code ./mvnw -q install -DskipTests && ./mvnw -q -pl redlock-examples exec:java
 * -Dexec.mainClass=dev.redlock.examples.FencedSqlExample}
 */
public final class FencedSqlExample {
  /** The whole pattern: the token is a condition of the update. */
  static final String FENCED_UPDATE =
      "UPDATE ledger SET balance = ?, fence = ?, written_by = ? WHERE account = ? AND fence < ?";

  private final PrintStream out;

  FencedSqlExample(PrintStream out) {
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    new FencedSqlExample(System.out).run();
  }

  /** Runs the scenario; returns the ledger row's final writer. */
  String run() throws Exception {
    try (RedisNodes nodes = RedisNodes.start(3);
        Connection db = DriverManager.getConnection("jdbc:h2:mem:ledger;DB_CLOSE_DELAY=-1")) {
      NodeData.vouchForNewNodes(
          nodes); // new nodes never held a lock: no need to wait out the restart guard
      try (Statement ddl = db.createStatement()) {
        ddl.execute(
            "CREATE TABLE ledger (account VARCHAR(20) PRIMARY KEY, balance DECIMAL(12,2),"
                + " fence BIGINT NOT NULL DEFAULT 0, written_by VARCHAR(10))");
        ddl.execute("INSERT INTO ledger (account, balance) VALUES ('acc-7', 1000.00)");
      }
      RedlockConfig config =
          RedlockConfig.builder().nodes(nodes.uris()).nodeTimeout(Duration.ofMillis(100)).build();
      try (Redlock a = Redlock.create(config);
          Redlock b = Redlock.create(config)) {
        Lease leaseA = a.acquire("ledger:acc-7", Duration.ofMillis(500), Duration.ofSeconds(5));
        out.println("A holds the lock, fencing token " + leaseA.fencingToken());
        out.println("A pauses (a long GC) past the end of its lease...");
        while (leaseA.isValid()) {
          TimeUnit.MILLISECONDS.sleep(50);
        }
        try (Lease leaseB =
            b.acquire("ledger:acc-7", Duration.ofSeconds(5), Duration.ofSeconds(5))) {
          out.println("B holds the lock, fencing token " + leaseB.fencingToken());
          out.println(
              "B writes: "
                  + (write(db, "B", "1250.00", leaseB.fencingToken())
                      ? "1 row updated"
                      : "refused"));
        }
        boolean stale = write(db, "A", "900.00", leaseA.fencingToken());
        out.println(
            "A wakes up and writes with token "
                + leaseA.fencingToken()
                + ": "
                + (stale
                    ? "1 row updated (THIS WOULD BE A BUG)"
                    : "0 rows updated -> A knows it lost the lock and stops"));
        leaseA.release();
      }
      try (Statement query = db.createStatement();
          ResultSet row =
              query.executeQuery(
                  "SELECT balance, fence, written_by FROM ledger WHERE account = 'acc-7'")) {
        row.next();
        out.println(
            "ledger acc-7: balance "
                + row.getBigDecimal(1)
                + ", fence "
                + row.getLong(2)
                + ", written by "
                + row.getString(3));
        return row.getString(3);
      }
    }
  }

  private static boolean write(Connection db, String who, String balance, long token)
      throws SQLException {
    try (PreparedStatement update = db.prepareStatement(FENCED_UPDATE)) {
      update.setBigDecimal(1, new java.math.BigDecimal(balance));
      update.setLong(2, token);
      update.setString(3, who);
      update.setString(4, "acc-7");
      update.setLong(5, token);
      return update.executeUpdate() == 1;
    }
  }
}
