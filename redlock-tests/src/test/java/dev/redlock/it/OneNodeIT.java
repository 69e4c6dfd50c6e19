package dev.redlock.it;

import dev.redlock.testkit.RedisFixture;

/**
 * The lease contract and the Redis-only tests on a single node: no fault tolerance, but every rule
 * of ownership and expiry.
 */
class OneNodeIT extends RedisQuorumContract {
  OneNodeIT() {
    super(RedisFixture.nodes(1));
  }
}
