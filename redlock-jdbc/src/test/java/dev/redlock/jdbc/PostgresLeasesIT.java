package dev.redlock.jdbc;

/** The lease contract and the table's own tests on PostgreSQL. */
class PostgresLeasesIT extends JdbcLeasesContract {
  @Override
  Database.Kind kind() {
    return Database.Kind.POSTGRESQL;
  }
}
