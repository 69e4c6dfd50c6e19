/**
 * The operator's tools over a lock's nodes (status, force release, vouching for new nodes, the
 * restart guard's view), apart from the application API: {@code dev.redlock.admin}.
 */
module dev.redlock.admin {
  requires transitive dev.redlock;
  requires org.slf4j;

  exports dev.redlock.admin;
}
