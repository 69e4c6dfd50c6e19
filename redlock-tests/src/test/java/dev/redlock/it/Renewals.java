package dev.redlock.it;

import dev.redlock.LeaseTask;
import dev.redlock.Redlock;
import dev.redlock.testkit.RedisFixture;
import java.time.Duration;

/**
 * The base of the renewal suites ({@link RenewalIT}, {@link LeaseLossIT}): three real nodes, a
 * short ttl and node timeout, and {@code withLock} on the test's resource.
 */
abstract class Renewals extends RealNodesTest {
  Renewals() {
    super(RedisFixture.nodes(3));
  }

  /**
   * Short enough that several renewals happen in a test, long enough to be robust on a loaded
   * machine.
   */
  static final Duration TTL = Duration.ofMillis(900);

  @Override
  public Duration nodeTimeout() {
    return Duration.ofMillis(100);
  }

  /** {@code holder.withLock} on this test's resource with {@link #TTL}, without waiting. */
  <T, E extends Exception> T withTheLock(Redlock holder, LeaseTask<T, E> task)
      throws E, InterruptedException {
    return holder.withLock(resource(), TTL, Duration.ZERO, task);
  }
}
