package dev.redlock.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The SQL of one database: every statement the store runs, on the database's own clock. Chosen from
 * the connection's metadata.
 */
enum Dialect {
  /**
   * PostgreSQL: {@code INSERT ... ON CONFLICT ... DO UPDATE ... WHERE expired} takes a free or
   * expired row; then {@code UPDATE ... RETURNING} draws our fencing token, if the row is ours;
   * times are {@code timestamptz} from {@code clock_timestamp()}.
   */
  POSTGRESQL(
      "postgresql.sql",
      "INSERT INTO %1$s (resource, owner, fencing_token, expires_at)"
          + " VALUES (?, ?, 0, clock_timestamp() + ? * interval '1 millisecond')"
          + " ON CONFLICT (resource) DO UPDATE SET owner = EXCLUDED.owner,"
          + " expires_at = EXCLUDED.expires_at"
          + " WHERE %1$s.expires_at <= clock_timestamp()",
      "UPDATE %1$s SET fencing_token = nextval('%2$s') WHERE resource = ? AND owner = ?"
          + " RETURNING fencing_token",
      null,
      // GREATEST: an extend never shortens a lease (Lease.extend).
      "UPDATE %1$s SET expires_at ="
          + " GREATEST(expires_at, clock_timestamp() + ? * interval '1 millisecond')"
          + " WHERE resource = ? AND owner = ? AND expires_at > clock_timestamp()",
      "DELETE FROM %1$s WHERE resource IN (SELECT resource FROM %1$s"
          + " WHERE expires_at <= clock_timestamp() LIMIT ? FOR UPDATE SKIP LOCKED)"
          + " AND expires_at <= clock_timestamp()"),

  /**
   * MariaDB: {@code INSERT ... ON DUPLICATE KEY UPDATE} with every column kept unless the row has
   * expired (the assignments run left to right, {@code expires_at} last); then an {@code UPDATE}
   * draws our fencing token if the row is ours, and a read gives it back; times are UTC ({@code
   * UTC_TIMESTAMP(6)}), whatever the session time zone.
   */
  MARIADB(
      "mariadb.sql",
      "INSERT INTO %1$s (resource, owner, fencing_token, expires_at)"
          + " VALUES (?, ?, 0, UTC_TIMESTAMP(6) + INTERVAL ? * 1000 MICROSECOND)"
          + " ON DUPLICATE KEY UPDATE"
          + " owner = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner),"
          + " expires_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(expires_at), expires_at)",
      "UPDATE %1$s SET fencing_token = NEXTVAL(%2$s) WHERE resource = ? AND owner = ?",
      "SELECT fencing_token FROM %1$s WHERE resource = ? AND owner = ?",
      "UPDATE %1$s SET expires_at ="
          + " GREATEST(expires_at, UTC_TIMESTAMP(6) + INTERVAL ? * 1000 MICROSECOND)"
          + " WHERE resource = ? AND owner = ? AND expires_at > UTC_TIMESTAMP(6)",
      "DELETE FROM %1$s WHERE expires_at <= UTC_TIMESTAMP(6) LIMIT ?");

  private final String schemaFile;
  private final String acquire;
  private final String draw;
  private final String readBack;
  private final String extend;
  private final String cleanup;

  Dialect(
      String schemaFile,
      String acquire,
      String draw,
      String readBack,
      String extend,
      String cleanup) {
    this.schemaFile = schemaFile;
    this.acquire = acquire;
    this.draw = draw;
    this.readBack = readBack;
    this.extend = extend;
    this.cleanup = cleanup;
  }

  /**
   * The dialect of a database, from its product name.
   *
   * @throws IllegalArgumentException for a database without one
   */
  static Dialect of(String productName) {
    String name = productName == null ? "" : productName.toLowerCase(Locale.ROOT);
    if (name.contains("postgresql")) {
      return POSTGRESQL;
    }
    if (name.contains("mariadb")) {
      return MARIADB;
    }
    throw new IllegalArgumentException(
        "unsupported database '"
            + productName
            + "': redlock-jdbc speaks PostgreSQL (15+) and MariaDB (10.11+)");
  }

  /**
   * Takes a free or expired row, with no fencing token yet (0, or the last holder's; never
   * committed so): parameters resource, owner, ttl in ms.
   */
  String acquire(Table t) {
    return String.format(acquire, t.name());
  }

  /**
   * After {@link #acquire}, in the same transaction, draws the next fencing token into our row, if
   * it is ours: parameters resource, owner. Drawn only once the row is won and locked, a token is
   * always larger than those of the leases granted on the row before, however long the upsert
   * stalled: a token drawn before the conflict check could lose the race to a later lease.
   */
  String draw(Table t) {
    return String.format(draw, t.name(), t.sequence());
  }

  /** After {@link #draw}, reads our token back, or null when {@code draw} returns it. */
  String readBack(Table t) {
    return readBack == null ? null : String.format(readBack, t.name());
  }

  /**
   * Writes a multi-resource lease's one fencing token (drawn into its first row) into another of
   * its rows, if it is ours: parameters token, resource, owner.
   */
  String setToken(Table t) {
    return "UPDATE " + t.name() + " SET fencing_token = ? WHERE resource = ? AND owner = ?";
  }

  /** Extends our unexpired row: parameters ttl in ms, resource, owner. */
  String extend(Table t) {
    return String.format(extend, t.name());
  }

  /** Releases our row: parameters resource, owner. */
  String release(Table t) {
    return "DELETE FROM " + t.name() + " WHERE resource = ? AND owner = ?";
  }

  /** Deletes at most a batch of expired rows: parameter batch size. */
  String cleanup(Table t) {
    return String.format(cleanup, t.name());
  }

  // ---- read-write locks (JdbcLeaseStore.takeRead, takeWrite) ---------------------------------

  /** The database's clock, as every statement of this dialect reads it. */
  private String now() {
    return this == POSTGRESQL ? "clock_timestamp()" : "UTC_TIMESTAMP(6)";
  }

  /** {@link #now()} plus a parameter of milliseconds. */
  private String nowPlusMillis() {
    return this == POSTGRESQL
        ? "clock_timestamp() + ? * interval '1 millisecond'"
        : "UTC_TIMESTAMP(6) + INTERVAL ? * 1000 MICROSECOND";
  }

  /** Makes a read-write lock's guard row exist (expired: no intent mark): parameter its name. */
  String insertGuard(Table t) {
    return this == POSTGRESQL
        ? "INSERT INTO "
            + t.name()
            + " (resource, owner, fencing_token, expires_at) VALUES (?, '', 0, clock_timestamp())"
            + " ON CONFLICT (resource) DO NOTHING"
        : "INSERT INTO "
            + t.name()
            + " (resource, owner, fencing_token, expires_at) VALUES (?, '', 0, UTC_TIMESTAMP(6))"
            + " ON DUPLICATE KEY UPDATE resource = resource";
  }

  /** Locks one row until the transaction ends and says whether it is live: parameter its name. */
  String lockLive(Table t) {
    return "SELECT expires_at > " + now() + " FROM " + t.name() + " WHERE resource = ? FOR UPDATE";
  }

  /**
   * Locks every row whose name is LIKE the parameter (escape character '!') and says of each
   * whether it is live. Every row, live or not: a row being renewed is judged by the renewal's
   * outcome, once its lock is free, not by the expiry it had before.
   */
  String lockReaders(Table t) {
    return "SELECT expires_at > "
        + now()
        + " FROM "
        + t.name()
        + " WHERE resource LIKE ? ESCAPE '!' FOR UPDATE";
  }

  /** Inserts a reader's row: parameters its name, owner, ttl in ms. */
  String insertReader(Table t) {
    return "INSERT INTO "
        + t.name()
        + " (resource, owner, fencing_token, expires_at) VALUES (?, ?, 0, "
        + nowPlusMillis()
        + ")";
  }

  /** Raises the guard row's expiry, the writer intent mark, never lowering it: ms, guard name. */
  String markIntent(Table t) {
    return "UPDATE "
        + t.name()
        + " SET expires_at = GREATEST(expires_at, "
        + nowPlusMillis()
        + ") WHERE resource = ?";
  }

  /** Ends the writer intent mark: parameter the guard's name. */
  String clearIntent(Table t) {
    return "UPDATE "
        + t.name()
        + " SET expires_at = LEAST(expires_at, "
        + now()
        + ") WHERE resource = ?";
  }

  /**
   * The shipped schema ({@code dev/redlock/jdbc/*.sql}) for table {@code t}, one statement each.
   */
  List<String> schema(Table t) {
    String text;
    try (InputStream in = Dialect.class.getResourceAsStream(schemaFile)) {
      if (in == null) {
        throw new IllegalStateException("missing resource dev/redlock/jdbc/" + schemaFile);
      }
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    StringBuilder withoutComments = new StringBuilder();
    for (String line : text.split("\n")) {
      int comment = line.indexOf("--");
      withoutComments.append(comment < 0 ? line : line.substring(0, comment)).append('\n');
    }
    String sql =
        withoutComments
            .toString()
            .replace("redlock_leases_expires_at", t.simpleName() + "_expires_at")
            .replace("redlock_leases_fence", t.sequence())
            .replace("redlock_leases", t.name());
    List<String> statements = new ArrayList<>();
    for (String statement : sql.split(";")) {
      if (!statement.isBlank()) {
        statements.add(statement.trim());
      }
    }
    return statements;
  }

  /** A LIKE pattern for every value starting with {@code prefix} (escape character '!'). */
  static String likePrefix(String prefix) {
    return prefix.replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%";
  }
}
