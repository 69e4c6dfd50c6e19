package dev.redlock.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.MissingToolException;
import dev.redlock.testkit.Tools;
import java.sql.DriverManager;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

class SettlementOnPostgresExampleIT {
  static final String URL =
      System.getenv()
          .getOrDefault("REDLOCK_PG_URL", "jdbc:postgresql://127.0.0.1:5432/redlock_test");
  static final String USER = System.getenv().getOrDefault("REDLOCK_DB_USER", "redlock");
  static final String PASSWORD = System.getenv().getOrDefault("REDLOCK_DB_PASSWORD", "redlock");

  @Test
  void everyEntryIsSettledOnceOnPostgres() throws Exception {
    Tools.requireOrSkip(
        () -> {
          try (var c = DriverManager.getConnection(URL, USER, PASSWORD)) {
            return c;
          } catch (SQLException e) {
            throw new MissingToolException(
                "PostgreSQL not reachable at "
                    + URL
                    + ": run .ci/databases ("
                    + e.getMessage()
                    + ")",
                e);
          }
        });
    ExampleRun<Boolean> run =
        ExampleRun.of(out -> new SettlementOnPostgresExample(out, URL, USER, PASSWORD, 24).run(4));
    boolean ok = run.result();
    String output = run.output();
    assertTrue(ok, output);
    assertTrue(
        output.contains("OK: 24 of 24 entries settled, 24 settlements, 0 overlapping"), output);
  }
}
