package dev.redlock.it;

import dev.redlock.testkit.RedisBinary;

/**
 * The lease contract and the Redis-only tests on three Redis 6.2 nodes (the binary embedded-redis
 * ships), to keep 6.2 working.
 */
class ThreeNodesRedis62IT extends RedisQuorumContract {
  @Override
  int nodeCount() {
    return 3;
  }

  @Override
  RedisBinary binary() {
    return RedisBinary.embedded();
  }
}
