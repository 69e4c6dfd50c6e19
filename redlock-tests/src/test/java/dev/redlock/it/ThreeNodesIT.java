package dev.redlock.it;

/** The contract on three nodes: one may fail. */
class ThreeNodesIT extends LockContract {
  @Override
  int nodeCount() {
    return 3;
  }
}
