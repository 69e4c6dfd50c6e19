/**
 * Redlock for Java: a distributed lock holding a lease on a majority of N independent Redis nodes.
 * Only {@code dev.redlock} is exported; everything else is an implementation detail.
 */
module dev.redlock {
  requires transitive redis.clients.jedis; // FencedWrites takes a Jedis client
  requires org.apache.commons.pool2;
  requires org.slf4j;

  exports dev.redlock;
}
