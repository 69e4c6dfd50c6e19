package dev.redlock.jdbc;

/** The lease contract and the table's own tests on MariaDB. */
class MariaDbLeasesIT extends JdbcLeasesContract {
  @Override
  Database.Kind kind() {
    return Database.Kind.MARIADB;
  }
}
