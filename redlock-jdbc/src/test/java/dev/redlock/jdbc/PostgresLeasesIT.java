package dev.redlock.jdbc;

import org.junit.jupiter.api.Tag;

/** The lease contract and the table's own tests on PostgreSQL. */
@Tag("full") // The lease contract on PostgreSQL: the full tier.
class PostgresLeasesIT extends JdbcLeasesContract {
  @Override
  Database.Kind kind() {
    return Database.Kind.POSTGRESQL;
  }
}
