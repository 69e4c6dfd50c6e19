package dev.redlock.quorum;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How fast each node has answered lately (an exponentially weighted average), so that requests are
 * written to, and replies waited for from, the fastest nodes first: a slow or failing node is asked
 * last and its reply is the one left to an I/O thread. Racy updates are fine: it is a hint.
 */
final class NodeLatencies {
  private final AtomicLongArray expected;

  NodeLatencies(int nodes) {
    this.expected = new AtomicLongArray(nodes);
  }

  long expected(int node) {
    return expected.get(node);
  }

  /**
   * A request to {@code node} ended after {@code nanos}; a failure counts as at least the node
   * timeout, so a failing node goes last. Every request, whoever reads its reply, must report here:
   * a node whose failures went unseen would keep being written to by callers.
   */
  void observe(int node, long nanos) {
    long old = expected.get(node);
    expected.set(node, old == 0 ? nanos : old + (nanos - old) / 8);
  }

  /** The nodes, fastest first (insertion sort: N is 1 to 7). */
  int[] fastestFirst() {
    int n = expected.length();
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      int j = i;
      long e = expected.get(i);
      while (j > 0 && expected.get(order[j - 1]) > e) {
        order[j] = order[j - 1];
        j--;
      }
      order[j] = i;
    }
    return order;
  }
}
