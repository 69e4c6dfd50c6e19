package dev.redlock.it;

/** The contract on a single node: no fault tolerance, but every rule of ownership and expiry. */
class OneNodeIT extends LockContract {
  @Override
  int nodeCount() {
    return 1;
  }
}
