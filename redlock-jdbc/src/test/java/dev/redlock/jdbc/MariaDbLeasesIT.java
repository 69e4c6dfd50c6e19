package dev.redlock.jdbc;

import org.junit.jupiter.api.Tag;

/** The lease contract and the table's own tests on MariaDB. */
@Tag("full") // The lease contract on MariaDB: the full tier.
class MariaDbLeasesIT extends JdbcLeasesContract {
  @Override
  Database.Kind kind() {
    return Database.Kind.MARIADB;
  }
}
