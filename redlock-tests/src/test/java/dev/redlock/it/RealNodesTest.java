package dev.redlock.it;

import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Tools;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;

/**
 * The one fixture of the real-node suites: K redis-server processes per class, emptied (and vouched
 * for) before each test, healed after it; clients made by a test are closed after it. Each test
 * gets its own resource name.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RealNodesTest {
  /**
   * Generous bound for "returns instead of hanging": far above any correct run, far below a hang.
   */
  static final Duration NO_HANG = Duration.ofSeconds(30);

  RedisNodes nodes;
  final List<Redlock> clients = new ArrayList<>();
  String resource;

  abstract int nodeCount();

  RedisBinary binary() {
    return RedisBinary.locate();
  }

  /** How nodes run, and how a killed node comes back between tests. */
  Persistence persistence() {
    return Persistence.NONE;
  }

  Duration nodeTimeout() {
    return Duration.ofMillis(200);
  }

  @BeforeAll
  void startNodes() {
    nodes = Tools.requireOrSkip(() -> RedisNodes.start(nodeCount(), binary(), persistence()));
  }

  @AfterAll
  void stopNodes() {
    if (nodes != null) {
      nodes.close();
    }
  }

  @BeforeEach
  void cleanNodes(TestInfo info) {
    nodes.heal(persistence());
    nodes.all().forEach(Admin::flushAll);
    resource = "it:" + info.getTestMethod().orElseThrow().getName();
  }

  @AfterEach
  void closeClients() {
    clients.forEach(Redlock::close);
    clients.clear();
    nodes.heal(persistence());
  }

  /** Settings for a client of every node: short retries, so contention tests run fast. */
  RedlockConfig.Builder config() {
    return RedlockConfig.builder()
        .nodes(nodes.uris())
        .nodeTimeout(nodeTimeout())
        .retryDelay(Duration.ofMillis(20))
        .retryJitter(Duration.ofMillis(20));
  }

  Redlock client() {
    return client(config().build());
  }

  /** A client closed after the test. */
  Redlock client(RedlockConfig config) {
    Redlock redlock = Redlock.create(config);
    clients.add(redlock);
    return redlock;
  }

  /** The Redis key of this test's resource, with the default prefix. */
  String key() {
    return RedlockConfig.DEFAULT_KEY_PREFIX + resource;
  }

  /** How many running, unfrozen nodes hold this test's key. */
  long nodesWithKey() {
    return nodes.all().stream()
        .filter(RedisNode::isRunning)
        .filter(node -> !node.isPaused())
        .filter(node -> Admin.get(node, key()) != null)
        .count();
  }
}
