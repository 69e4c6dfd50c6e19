/**
 * Requires the three add-on modules only: dev.redlock, java.sql and Micrometer come with them
 * (requires transitive), as their signatures use those modules' types.
 */
module example.consumer {
  requires dev.redlock.admin;
  requires dev.redlock.jdbc;
  requires dev.redlock.micrometer;
}
