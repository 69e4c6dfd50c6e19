package dev.redlock.it;

/** The lease contract and the Redis-only tests on three nodes: one may fail. */
class ThreeNodesIT extends RedisQuorumContract {
  @Override
  int nodeCount() {
    return 3;
  }
}
