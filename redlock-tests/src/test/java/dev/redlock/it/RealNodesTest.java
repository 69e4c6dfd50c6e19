package dev.redlock.it;

import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Timing;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestInstance;

/**
 * The base of the real-node suites about one feature (renewal, fencing, the restart guard...): the
 * one fixture, {@link RealNodes}, with K nodes per class, emptied (and vouched for) before each
 * test, healed after it; clients made by a test are closed after it. Each test gets its own
 * resource name.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RealNodesTest {
  /**
   * Generous bound for "returns instead of hanging": far above any correct run, far below a hang
   * ({@link Timing#noHang()}).
   */
  static final Duration NO_HANG = Timing.get().noHang();

  private RealNodes fixture;
  RedisNodes nodes;
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
    return RealNodes.NODE_TIMEOUT;
  }

  @BeforeAll
  void startNodes() {
    fixture = new RealNodes(nodeCount(), binary(), persistence(), nodeTimeout());
    fixture.start();
    nodes = fixture.nodes();
  }

  @AfterAll
  void stopNodes() {
    if (fixture != null) {
      fixture.stop();
    }
  }

  @BeforeEach
  void cleanNodes(TestInfo info) {
    fixture.clean();
    resource = "it:" + info.getTestMethod().orElseThrow().getName();
  }

  @AfterEach
  void closeClients() {
    fixture.closeClients();
  }

  /** Settings for a client of every node: short retries, so contention tests run fast. */
  RedlockConfig.Builder config() {
    return fixture.config();
  }

  Redlock client() {
    return client(config().build());
  }

  /** A client closed after the test. */
  Redlock client(RedlockConfig config) {
    return fixture.client(config);
  }

  /** The Redis key of this test's resource, with the default prefix. */
  String key() {
    return RedlockConfig.DEFAULT_KEY_PREFIX + resource;
  }

  /** How many running, unfrozen nodes hold this test's key. */
  long nodesWithKey() {
    return fixture.nodesWithKey(key());
  }
}
