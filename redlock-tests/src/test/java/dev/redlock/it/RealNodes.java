package dev.redlock.it;

import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Timing;
import dev.redlock.testkit.Tools;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The one fixture of the real-node suites, composed by {@link RealNodesTest} (the suites about one
 * feature) and {@link RedisQuorumContract} (the lease contract on 1, 3 and 5 nodes, and on 6.2): K
 * redis-server processes per class, emptied (and vouched for) before each test, healed after it;
 * the Redlocks a test makes through it are closed after it.
 */
final class RealNodes {
  /** The node timeout the suites run with unless they say otherwise: 200 ms, scaled by Timing. */
  static final Duration NODE_TIMEOUT = Timing.get().scaled(Duration.ofMillis(200));

  private final int count;
  private final RedisBinary binary;
  private final Persistence persistence;
  private final Duration nodeTimeout;
  private final List<Redlock> clients = new ArrayList<>();
  private RedisNodes nodes;

  /**
   * {@code count} nodes of {@code binary}, run with {@code persistence} (how a killed node comes
   * back between tests, too), for clients with {@code nodeTimeout}.
   */
  RealNodes(int count, RedisBinary binary, Persistence persistence, Duration nodeTimeout) {
    this.count = count;
    this.binary = binary;
    this.persistence = persistence;
    this.nodeTimeout = nodeTimeout;
  }

  /**
   * Starts the nodes (before all tests): skipped, or failed under CI, if redis-server is missing.
   */
  void start() {
    nodes = Tools.requireOrSkip(() -> RedisNodes.start(count, binary, persistence));
  }

  /** Stops the nodes (after all tests). */
  void stop() {
    if (nodes != null) {
      nodes.close();
    }
  }

  RedisNodes nodes() {
    return nodes;
  }

  /** Before each test: every node running and answering, empty, and vouched for. */
  void clean() {
    nodes.heal(persistence);
    nodes.all().forEach(Admin::flushAll);
  }

  /** After each test: its Redlocks closed, then every node healed. */
  void closeClients() {
    clients.forEach(Redlock::close);
    clients.clear();
    nodes.heal(persistence);
  }

  /** Settings for a client of every node: short retries, so contention tests run fast. */
  RedlockConfig.Builder config() {
    return RedlockConfig.builder()
        .nodes(nodes.uris())
        .nodeTimeout(nodeTimeout)
        .retryDelay(Duration.ofMillis(20))
        .retryJitter(Duration.ofMillis(20));
  }

  /** A Redlock closed after the test. */
  Redlock client(RedlockConfig config) {
    Redlock redlock = Redlock.create(config);
    clients.add(redlock);
    return redlock;
  }

  /** How many running, unfrozen nodes hold {@code key}. */
  long nodesWithKey(String key) {
    return nodes.all().stream()
        .filter(RedisNode::isRunning)
        .filter(node -> !node.isPaused())
        .filter(node -> Admin.get(node, key) != null)
        .count();
  }
}
