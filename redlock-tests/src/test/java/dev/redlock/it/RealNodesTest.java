package dev.redlock.it;

import dev.redlock.Redlock;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Timing;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The base of the real-node suites about one feature (renewal, fencing, the restart guard...): the
 * kit's {@link RedisFixture} with the K nodes per class each subclass's constructor asks for
 * (emptied and vouched for before each test, healed after it; the clients a test makes are closed
 * after it). Each test gets its own resource name ({@link #resource()}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RealNodesTest implements RealNodesSuite {
  /**
   * Generous bound for "returns instead of hanging": far above any correct run, far below a hang
   * ({@link Timing#noHang()}).
   */
  static final Duration NO_HANG = Timing.get().noHang();

  /** The class's nodes: K per class, emptied and vouched for before each test. */
  @RegisterExtension final RedisFixture redis;

  RedisNodes nodes;

  /** A suite on the nodes of {@code spec}, per class. */
  RealNodesTest(RedisFixture.Spec spec) {
    redis = RedisFixture.perClass(spec);
  }

  @Override
  public RedisFixture redis() {
    return redis;
  }

  @BeforeEach
  void useTheClassNodes() {
    nodes = redis().nodes();
  }

  Redlock client() {
    return client(config().build());
  }
}
