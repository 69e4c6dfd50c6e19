package dev.redlock.it;

/** The lease contract and the Redis-only tests on five nodes: two may fail. */
class FiveNodesIT extends RedisQuorumContract {
  @Override
  int nodeCount() {
    return 5;
  }
}
