/**
 * Redlock for Java: a distributed lock holding a lease on a majority of N independent Redis nodes.
 * {@code dev.redlock} is the API and {@code dev.redlock.config} its configuration; {@code
 * dev.redlock.spi} is for those who write a lease store (a SQL table, in {@code redlock-jdbc}).
 * Everything else is an implementation detail.
 */
@SuppressWarnings("module") // dev.redlock.admin is built after this module
module dev.redlock {
  requires transitive redis.clients.jedis; // FencedWrites takes a Jedis client
  // Not used here: Jedis's pools use it, and Jedis, an automatic module, cannot require it, so on
  // the module path a JedisPool handed to FencedWrites would find it missing.
  requires org.apache.commons.pool2;
  requires org.slf4j;

  exports dev.redlock;
  exports dev.redlock.config;
  exports dev.redlock.spi;
  // The operator's tools (redlock-admin) use the nodes' key layout, the scripts and name rules.
  exports dev.redlock.node to
      dev.redlock.admin;
  exports dev.redlock.internal to
      dev.redlock.admin;
  exports dev.redlock.script to
      dev.redlock.admin;
}
