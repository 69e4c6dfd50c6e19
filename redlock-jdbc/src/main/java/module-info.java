/**
 * Leases in a SQL table (PostgreSQL, MariaDB): {@link dev.redlock.jdbc.JdbcLeases} is the entry
 * point. The lease types it returns are {@code dev.redlock}'s, and it takes a {@link
 * javax.sql.DataSource}, so both modules come with it.
 */
module dev.redlock.jdbc {
  requires transitive dev.redlock;
  requires transitive java.sql;
  requires org.slf4j;

  exports dev.redlock.jdbc;
}
