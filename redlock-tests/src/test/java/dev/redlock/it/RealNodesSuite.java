package dev.redlock.it;

import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.Timing;
import java.time.Duration;

/**
 * What every real-node suite has over the nodes of its class ({@link RealNodesTest}, {@link
 * RedisQuorumContract}): clients of every node with the suites' settings, closed after the test,
 * and a look at which nodes hold the test's key. The nodes come from the kit's {@link
 * RedisFixture}, registered by each concrete class.
 */
interface RealNodesSuite {
  /** The node timeout the suites run with unless they say otherwise: 200 ms, scaled by Timing. */
  Duration NODE_TIMEOUT = Timing.get().scaled(Duration.ofMillis(200));

  /** The concrete class's fixture, on a static {@code @RegisterExtension} field. */
  RedisFixture redis();

  /** This test's resource: {@code it:} and the test's name. */
  default String resource() {
    return "it:" + redis().testName();
  }

  /** The node timeout of {@link #config()}. */
  default Duration nodeTimeout() {
    return NODE_TIMEOUT;
  }

  /** Settings for a client of every node: short retries, so contention tests run fast. */
  default RedlockConfig.Builder config() {
    return redis()
        .config()
        .nodeTimeout(nodeTimeout())
        .retryDelay(Duration.ofMillis(20))
        .retryJitter(Duration.ofMillis(20));
  }

  /** A Redlock closed after the test. */
  default Redlock client(RedlockConfig config) {
    return redis().client(config);
  }

  /** The Redis key of this test's resource, with the default prefix. */
  default String key() {
    return RedlockConfig.DEFAULT_KEY_PREFIX + resource();
  }

  /** How many running, unfrozen nodes hold this test's key. */
  default long nodesWithKey() {
    return redis().nodesWithKey(key());
  }
}
