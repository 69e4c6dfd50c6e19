package dev.redlock.it;

import dev.redlock.testkit.RedisFixture;

/** The lease contract and the Redis-only tests on three nodes: one may fail. */
class ThreeNodesIT extends RedisQuorumContract {
  ThreeNodesIT() {
    super(RedisFixture.nodes(3));
  }
}
