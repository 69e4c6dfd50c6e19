package dev.redlock.it;

import dev.redlock.testkit.RedisFixture;

/** The lease contract and the Redis-only tests on five nodes: two may fail. */
class FiveNodesIT extends RedisQuorumContract {
  FiveNodesIT() {
    super(RedisFixture.nodes(5));
  }
}
