package dev.redlock.jdbc;

import dev.redlock.NodeOutcome;
import dev.redlock.spi.LeaseRequest;
import dev.redlock.spi.LeaseStore;
import dev.redlock.spi.Tally;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leases in one SQL table: a row per lease (resource, owner token, fencing token, expiry on the
 * database's clock), tokens from a sequence, drawn once the row is won. Every operation is one
 * short explicit transaction on a connection borrowed for it, whatever the pool's autocommit
 * setting; the wait for that connection and every statement are bounded by the timeout.
 */
final class JdbcLeaseStore implements LeaseStore<JdbcLeaseStore.Row> {
  private static final Logger log = LoggerFactory.getLogger(JdbcLeaseStore.class);
  private static final String HELD = "held by another owner";
  private static final String NOT_OWNER = "not the owner: expired or taken";
  private static final String DEADLOCK_VICTIM =
      " (the database chose this take as a deadlock's victim: rolled back)";

  private final Connections connections;
  private final Table table;
  private final Dialect dialect;
  private final int timeoutSeconds;
  private final String name;

  /**
   * A lease held in the table: its {@code rows}, sorted, all with the same owner and fencing token:
   * the resource's row, a row per resource of a set, or a read-write lock side's one row.
   */
  record Row(LeaseRequest request, long fencingToken, NodeOutcome granted, List<String> rows)
      implements LeaseStore.Held {
    @Override
    public List<NodeOutcome> outcomes() {
      return List.of(granted);
    }

    @Override
    public String toString() {
      return "Row{" + request.name() + ", fence " + fencingToken + "}"; // never the token
    }
  }

  JdbcLeaseStore(DataSource dataSource, Table table, Dialect dialect, Duration timeout) {
    this.table = table;
    this.dialect = dialect;
    this.timeoutSeconds = (int) Math.max(1, (timeout.toMillis() + 999) / 1000);
    this.name = dialect.name().toLowerCase(java.util.Locale.ROOT) + ":" + table.name();
    this.connections = new Connections(dataSource, timeout, name);
  }

  @Override
  public int quorum() {
    return 1;
  }

  @Override
  public int size() {
    return 1;
  }

  @Override
  public void checkResource(String resource) {
    if (resource.length() > 255) {
      throw new IllegalArgumentException(
          "resource must be at most 255 characters (the table's key), was " + resource.length());
    }
    if (resource.startsWith(READ_WRITE)) {
      throw new IllegalArgumentException(
          "resource must not start with '"
              + READ_WRITE
              + "' (the rows of read-write locks), was '"
              + resource
              + "'");
    }
  }

  // ---- read-write locks ---------------------------------------------------------------------

  /**
   * Where a read-write lock's rows are named: {@code @rw:g:<name>} its guard (every attempt on the
   * lock locks it first, so they run one at a time; its expiry is the writer intent mark), {@code
   * @rw:w:<name>} its writer, {@code @rw:r:<name>#<id>} each reader. No plain resource starts so.
   */
  private static final String READ_WRITE = "@rw:";

  /** The longest read-write lock name: a reader's row name must fit the table's 255. */
  static final int MAX_READ_WRITE_NAME = 255 - "@rw:r:".length() - 1 - 16;

  @Override
  public boolean hasReadWriteLocks() {
    return true;
  }

  private static String checkReadWriteName(String name) {
    if (name.length() > MAX_READ_WRITE_NAME) {
      throw new IllegalArgumentException(
          "name of a read-write lock on the SQL store must be at most "
              + MAX_READ_WRITE_NAME
              + " characters (a reader's row name must fit the table's key), was "
              + name.length());
    }
    return name;
  }

  /** The rows a lease of {@code request} holds: its resources', or a read-write side's one. */
  private static List<String> rows(LeaseRequest request) {
    return switch (request.shape()) {
      case ONE, ALL -> request.resources();
      case READ ->
          List.of(
              READ_WRITE
                  + "r:"
                  + checkReadWriteName(request.name())
                  + "#"
                  + String.format(
                      "%016x", java.util.concurrent.ThreadLocalRandom.current().nextLong()));
      case WRITE -> List.of(READ_WRITE + "w:" + checkReadWriteName(request.name()));
    };
  }

  /**
   * One transaction, whatever the shape: a resource's row ({@link #take}), every row of a set, all
   * or none ({@link #takeAll}), or a read-write side's row ({@link #takeRead}, {@link #takeWrite}).
   * A deadlock the database reports is contention with another take: a refusal, not an outage.
   */
  @Override
  public Vote<Row> take(LeaseRequest request, long start) throws InterruptedException {
    String token = request.token();
    long ttlMillis = request.ttlMillis();
    List<String> rows = rows(request);
    long began = System.nanoTime();
    try (Connection c = connections.borrow()) {
      long fence =
          Transaction.run(
              c,
              () ->
                  switch (request.shape()) {
                    case ONE -> take(c, rows.get(0), token, ttlMillis);
                    case ALL -> takeAll(c, rows, token, ttlMillis);
                    case READ -> takeRead(c, request.name(), rows.get(0), token, ttlMillis);
                    case WRITE ->
                        takeWrite(
                            c,
                            request.name(),
                            rows.get(0),
                            token,
                            ttlMillis,
                            request.intentMillis());
                  });
      if (fence > 0) {
        SingleAnswer ok = answer(NodeOutcome.Status.OK, "", began, null);
        return new Vote<>(new Row(request, fence, ok.outcome(), rows), 1, ok);
      }
      return new Vote<>(null, 0, answer(NodeOutcome.Status.REFUSED, HELD, began, null));
    } catch (Transaction.UnknownCommit e) {
      if (e.result > 0) { // we had won: the rows may be committed, ours, and unknown to the engine
        Connections.owed(() -> forget(rows, token, ttlMillis, e));
      }
      return new Vote<>(null, 0, failure(e, began));
    } catch (SQLException e) {
      // InnoDB (MariaDB) can report a deadlock between upserts of new rows in one index gap,
      // whatever order each transaction takes its rows in (gap locks), and picks a victim at once:
      // contention with another take, a refusal.
      return new Vote<>(
          null,
          0,
          Transaction.deadlockVictim(e)
              ? answer(NodeOutcome.Status.REFUSED, HELD + DEADLOCK_VICTIM, began, e)
              : failure(e, began));
    }
  }

  private long takeRead(Connection c, String name, String reader, String token, long ttlMillis)
      throws SQLException {
    Boolean intent = lockGuard(c, name);
    if (intent == null || intent || anyLive(c, dialect.lockLive(table), READ_WRITE + "w:" + name)) {
      return 0; // no guard to lock (taken away meanwhile: ask again), a writer waits, or holds
    }
    try (PreparedStatement s = c.prepareStatement(dialect.insertReader(table))) {
      s.setQueryTimeout(timeoutSeconds);
      s.setString(1, reader);
      s.setString(2, token);
      s.setLong(3, ttlMillis);
      s.executeUpdate();
    }
    long fence = draw(c, reader, token);
    if (fence == 0) {
      c.rollback();
    }
    return fence;
  }

  private long takeWrite(
      Connection c, String name, String writer, String token, long ttlMillis, long intentMillis)
      throws SQLException {
    Boolean intent = lockGuard(c, name);
    if (intent == null) {
      return 0; // the guard was taken away meanwhile: nothing locked, ask again
    }
    String readers = READ_WRITE + "r:" + name + "#";
    long fence =
        anyLive(c, dialect.lockReaders(table), Dialect.likePrefix(readers))
            ? 0
            : take(c, writer, token, ttlMillis);
    try (PreparedStatement s =
        c.prepareStatement(fence > 0 ? dialect.clearIntent(table) : dialect.markIntent(table))) {
      s.setQueryTimeout(timeoutSeconds);
      if (fence > 0) {
        s.setString(1, READ_WRITE + "g:" + name); // in: the writer row keeps readers out now
      } else {
        if (intentMillis <= 0) {
          return 0; // refused, and this writer will not ask again: no mark
        }
        s.setLong(1, intentMillis);
        s.setString(2, READ_WRITE + "g:" + name);
      }
      s.executeUpdate();
    }
    return fence;
  }

  /**
   * Makes sure the lock's guard row exists and locks it until the transaction ends: whether its
   * writer intent mark is live, or null if the row was deleted between the two statements (by the
   * cleanup, once its mark had long expired), and so is not locked.
   */
  private Boolean lockGuard(Connection c, String name) throws SQLException {
    String guard = READ_WRITE + "g:" + name;
    try (PreparedStatement s = c.prepareStatement(dialect.insertGuard(table))) {
      s.setQueryTimeout(timeoutSeconds);
      s.setString(1, guard);
      s.executeUpdate();
    }
    try (PreparedStatement s = c.prepareStatement(dialect.lockLive(table))) {
      s.setQueryTimeout(timeoutSeconds);
      s.setString(1, guard);
      try (ResultSet rs = s.executeQuery()) {
        return rs.next() ? rs.getBoolean(1) : null;
      }
    }
  }

  /**
   * Locks every row {@code sql} selects with {@code parameter} (waiting for a renewal or release in
   * flight, so that what is judged is its outcome), and says whether any is live.
   */
  private boolean anyLive(Connection c, String sql, String parameter) throws SQLException {
    boolean live = false;
    try (PreparedStatement s = c.prepareStatement(sql)) {
      s.setQueryTimeout(timeoutSeconds);
      s.setString(1, parameter);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          live |= rs.getBoolean(1);
        }
      }
    }
    return live;
  }

  /**
   * Several rows, all or none: each taken as one is, in sorted order (the order every transaction
   * of this store locks rows in, so two attempts on overlapping sets cannot wait for each other in
   * a cycle), then one fencing token drawn for the set and written into every row. A row held by
   * another owner rolls the whole transaction back: our token, or 0.
   */
  private long takeAll(Connection c, List<String> resources, String token, long ttlMillis)
      throws SQLException {
    try (PreparedStatement take = c.prepareStatement(dialect.acquire(table))) {
      take.setQueryTimeout(timeoutSeconds);
      for (String resource : resources) {
        take.setString(1, resource);
        take.setString(2, token);
        take.setLong(3, ttlMillis);
        if (take.executeUpdate() == 0) {
          c.rollback(); // held: none of the set is taken (the rows before it are given back)
          return 0;
        }
      }
    }
    // One token for the set, drawn once every row is won (as take draws it): larger than every
    // token drawn before on any of them. The first row's draw also says whether it is ours.
    long fence = draw(c, resources.get(0), token);
    if (fence == 0) {
      c.rollback();
      return 0;
    }
    try (PreparedStatement same = c.prepareStatement(dialect.setToken(table))) {
      same.setQueryTimeout(timeoutSeconds);
      for (int i = 1; i < resources.size(); i++) {
        same.setLong(1, fence);
        same.setString(2, resources.get(i));
        same.setString(3, token);
        if (same.executeUpdate() == 0) {
          c.rollback(); // not ours after all (MariaDB counts a row it found): none is taken
          return 0;
        }
      }
    }
    return fence;
  }

  /**
   * After a won take whose commit went unanswered: deletes whatever rows of it are ours. Nothing to
   * delete yet is not proof: the commit may still be queued or running on the server, and land
   * after this delete looked (its rows are invisible until then).
   */
  private void forget(
      List<String> rows, String token, long ttlMillis, Transaction.UnknownCommit lost) {
    String what = rows.size() == 1 ? "'" + rows.get(0) + "'" : rows.toString();
    long deleted;
    try (Connection c = connections.borrowUninterrupted()) {
      deleted = Transaction.run(c, () -> deleteAll(c, rows, token));
    } catch (SQLException e) {
      log.warn(
          "acquire of {} counts as failed: {}; {} ({} ms) ends, as deleting {} failed too: {}",
          what,
          lost.getMessage(),
          rows.size() == 1
              ? "its row may be held until its ttl"
              : "its rows may be held until their ttl",
          ttlMillis,
          rows.size() == 1 ? "it" : "them",
          e.toString());
      return;
    }
    if (rows.size() > 1) {
      log.warn(
          "acquire of {} counts as failed: {}; {} row(s) it wrote deleted (a commit still on its"
              + " way would land rows held until their ttl, {} ms, ends)",
          what,
          lost.getMessage(),
          deleted,
          ttlMillis);
    } else if (deleted > 0) {
      log.warn(
          "acquire of {} counts as failed: {}; the row it wrote is deleted",
          what,
          lost.getMessage());
    } else {
      log.warn(
          "acquire of {} counts as failed: {}; no row of it is there now, but if its commit is"
              + " still on its way, the row it lands is held until its ttl ({} ms) ends",
          what,
          lost.getMessage(),
          ttlMillis);
    }
  }

  /** Deletes our rows, those still ours: the count deleted. */
  private long deleteAll(Connection c, List<String> resources, String token) throws SQLException {
    long deleted = 0;
    try (PreparedStatement s = c.prepareStatement(dialect.release(table))) {
      s.setQueryTimeout(timeoutSeconds);
      for (String resource : resources) {
        s.setString(1, resource);
        s.setString(2, token);
        deleted += s.executeUpdate();
      }
    }
    return deleted;
  }

  /**
   * Takes the row, then draws our fencing token into it (see {@link Dialect#draw}): our token if we
   * hold the row now, else 0.
   */
  private long take(Connection c, String resource, String token, long ttlMillis)
      throws SQLException {
    try (PreparedStatement take = c.prepareStatement(dialect.acquire(table))) {
      take.setQueryTimeout(timeoutSeconds);
      take.setString(1, resource);
      take.setString(2, token);
      take.setLong(3, ttlMillis);
      if (take.executeUpdate() == 0) {
        return 0; // no row touched: held (MariaDB counts a row it found, so the draw decides there)
      }
    }
    return draw(c, resource, token);
  }

  /** Draws our fencing token into our row: the token, or 0 if the row is another owner's. */
  private long draw(Connection c, String resource, String token) throws SQLException {
    try (PreparedStatement draw = c.prepareStatement(dialect.draw(table))) {
      draw.setQueryTimeout(timeoutSeconds);
      draw.setString(1, resource);
      draw.setString(2, token);
      String readBack = dialect.readBack(table);
      if (readBack == null) { // the draw returns the token
        try (ResultSet rs = draw.executeQuery()) {
          return rs.next() ? rs.getLong(1) : 0;
        }
      }
      if (draw.executeUpdate() == 0) {
        return 0; // the row is another owner's
      }
      try (PreparedStatement read = c.prepareStatement(readBack)) {
        read.setQueryTimeout(timeoutSeconds);
        read.setString(1, resource);
        read.setString(2, token);
        try (ResultSet rs = read.executeQuery()) {
          return rs.next() ? rs.getLong(1) : 0;
        }
      }
    }
  }

  @Override
  public Tally renew(Row row, long ttlMillis) throws InterruptedException {
    long began = System.nanoTime();
    try (Connection c = connections.borrow()) {
      // Every row of the lease in one transaction, in sorted order: all extended, or none (a row
      // that is no longer ours rolls the others back, and the renewal is refused).
      List<String> resources = row.rows();
      long updated =
          Transaction.run(
              c,
              () -> {
                try (PreparedStatement s = c.prepareStatement(dialect.extend(table))) {
                  s.setQueryTimeout(timeoutSeconds);
                  for (String resource : resources) {
                    s.setLong(1, ttlMillis);
                    s.setString(2, resource);
                    s.setString(3, row.request().token());
                    if (s.executeUpdate() != 1) {
                      c.rollback();
                      return 0;
                    }
                  }
                  return 1;
                }
              });
      return updated == 1
          ? answer(NodeOutcome.Status.OK, "", began, null)
          : answer(NodeOutcome.Status.REFUSED, NOT_OWNER, began, null);
    } catch (SQLException e) {
      return failure(e, began);
    }
  }

  /**
   * Deletes the lease's rows, owner-checked, in one transaction, through an interrupt (a release is
   * owed); a failure is logged at WARN, and the rows expire at their ttl.
   */
  @Override
  public void giveBack(Row row) {
    Connections.owed(
        () -> {
          try (Connection c = connections.borrowUninterrupted()) {
            Transaction.run(c, () -> deleteAll(c, row.rows(), row.request().token()));
          } catch (SQLException e) {
            // The row expires on its own; nobody else's row can be touched (owner-checked).
            log.warn(
                "release of '{}' failed; the row expires at its ttl: {}",
                row.request().name(),
                e.toString());
          }
        });
  }

  @Override
  public void giveBackAll(List<Row> rows) {
    rows.forEach(this::giveBack);
  }

  /** The pool is the caller's; the threads waiting on it are ours, and stop. */
  @Override
  public void close() {
    connections.close();
  }

  /** The database's answer, timed from {@code began}: a yes if {@code status} is OK. */
  private SingleAnswer answer(NodeOutcome.Status status, String detail, long began, Throwable e) {
    Duration took = Duration.ofNanos(System.nanoTime() - began);
    return new SingleAnswer(
        status == NodeOutcome.Status.OK, new NodeOutcome(name, status, detail, took), e);
  }

  private SingleAnswer failure(SQLException e, long began) {
    NodeOutcome.Status status =
        e instanceof SQLTimeoutException ? NodeOutcome.Status.TIMED_OUT : NodeOutcome.Status.FAILED;
    return answer(status, e.getClass().getSimpleName() + ": " + e.getMessage(), began, e);
  }

  @Override
  public String toString() {
    return "JdbcLeaseStore{" + name + "}";
  }
}
