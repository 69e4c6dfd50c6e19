package dev.redlock.it;

/**
 * The lease contract and the Redis-only tests on a single node: no fault tolerance, but every rule
 * of ownership and expiry.
 */
class OneNodeIT extends RedisQuorumContract {
  @Override
  int nodeCount() {
    return 1;
  }
}
