package dev.redlock.it;

/** The contract on five nodes: two may fail. */
class FiveNodesIT extends LockContract {
  @Override
  int nodeCount() {
    return 5;
  }
}
