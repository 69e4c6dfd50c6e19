package dev.redlock;

import java.time.Duration;

/**
 * The validity arithmetic of the algorithm, in one place.
 *
 * <p>A key set with {@code PX ttl} at some instant during an attempt lives at least until {@code
 * start + ttl} on the node's clock, where {@code start} is taken before any request is sent. Node
 * clocks may run at slightly different rates than ours, so we subtract a drift allowance: {@code
 * drift = ttl × factor + 2 ms} (the 2 ms covers the granularity of Redis expiry). The lease is
 * valid until {@code start + ttl - drift}: everything the attempt spent is already counted because
 * {@code start} precedes the first request.
 */
final class Validity {
  /** The fixed part of the drift allowance: Redis expires keys with millisecond granularity. */
  static final long FIXED_DRIFT_NANOS = Duration.ofMillis(2).toNanos();

  private Validity() {}

  /** The drift allowance for a ttl: {@code ttl × factor + 2 ms}, in nanoseconds. */
  public static long driftNanos(long ttlMillis, double factor) {
    return (long) Math.ceil(ttlMillis * 1_000_000d * factor) + FIXED_DRIFT_NANOS;
  }

  /** The instant, on the monotonic clock, at which a lease taken from {@code startNanos} ends. */
  public static long validUntil(long startNanos, long ttlMillis, double factor) {
    return startNanos + ttlMillis * 1_000_000L - driftNanos(ttlMillis, factor);
  }

  /**
   * Checks a requested ttl against the configuration: it must be a whole, positive number of
   * milliseconds, and larger than the drift allowance plus one node timeout, or no attempt could
   * ever leave validity.
   *
   * @return the ttl in milliseconds
   * @throws NullPointerException if {@code ttl} is null
   * @throws IllegalArgumentException naming the rule
   */
  public static long checkTtl(Duration ttl, Duration nodeTimeout, double factor) {
    if (ttl == null) {
      throw new NullPointerException("ttl must not be null");
    }
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be > 0, was " + ttl);
    }
    if (ttl.toNanos() % 1_000_000L != 0) {
      throw new IllegalArgumentException(
          "ttl must be a whole number of milliseconds (Redis PX), was " + ttl);
    }
    long ttlMillis = ttl.toMillis();
    long floorNanos = driftNanos(ttlMillis, factor) + nodeTimeout.toNanos();
    if (ttl.toNanos() <= floorNanos) {
      throw new IllegalArgumentException(
          "ttl must be > nodeTimeout + clock drift ("
              + nodeTimeout.toMillis()
              + "ms + "
              + Duration.ofNanos(driftNanos(ttlMillis, factor)).toMillis()
              + "ms), was "
              + ttl);
    }
    return ttlMillis;
  }
}
