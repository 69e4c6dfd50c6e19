/**
 * Requires the four add-on modules only: dev.redlock, java.sql, Micrometer and ShedLock's core come
 * with them (requires transitive), as their signatures use those modules' types.
 */
module example.consumer {
  requires dev.redlock.admin;
  requires dev.redlock.jdbc;
  requires dev.redlock.micrometer;
  requires dev.redlock.shedlock;
}
