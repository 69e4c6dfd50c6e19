package dev.redlock.timing;

import java.time.Duration;
import java.util.Objects;

/**
 * The validity arithmetic: a lease taken from {@code start} (read before any request is sent) is
 * valid until {@code start + ttl - drift}, with {@code drift = ttl × factor + 2 ms} for clocks that
 * run at different rates (docs/design.md, "Why validity is ttl − elapsed − drift").
 */
public final class Validity {
  /** The fixed part of the drift allowance: Redis expires keys with millisecond granularity. */
  public static final long FIXED_DRIFT_NANOS = Duration.ofMillis(2).toNanos();

  private Validity() {}

  public static long driftNanos(long ttlMillis, double factor) {
    return (long) Math.ceil(ttlMillis * 1_000_000d * factor) + FIXED_DRIFT_NANOS;
  }

  public static long validUntil(long startNanos, long ttlMillis, double factor) {
    return startNanos + ttlMillis * 1_000_000L - driftNanos(ttlMillis, factor);
  }

  /**
   * Checks a ttl, returned in milliseconds: a whole, positive number of them, larger than the drift
   * allowance plus one node timeout, or no attempt could leave validity.
   */
  public static long checkTtl(Duration ttl, Duration nodeTimeout, double factor) {
    Objects.requireNonNull(ttl, "ttl must not be null");
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("ttl must be > 0, was " + ttl);
    }
    if (ttl.toNanos() % 1_000_000L != 0) {
      throw new IllegalArgumentException(
          "ttl must be a whole number of milliseconds (Redis PX), was " + ttl);
    }
    String floor = floorBroken(ttl.toMillis(), nodeTimeout, factor);
    if (floor != null) {
      throw new IllegalArgumentException("ttl must be > " + floor + ", was " + ttl);
    }
    return ttl.toMillis();
  }

  /**
   * The floor a ttl of {@code ttlMillis} fails to clear, {@code nodeTimeout + clock drift (… ms + …
   * ms)}; null if it clears it. The one statement of the rule, for a ttl and for {@code maxTtl}.
   */
  public static String floorBroken(long ttlMillis, Duration nodeTimeout, double factor) {
    long drift = driftNanos(ttlMillis, factor);
    if (ttlMillis * 1_000_000L > nodeTimeout.toNanos() + drift) {
      return null;
    }
    return "nodeTimeout + clock drift ("
        + nodeTimeout.toMillis()
        + "ms + "
        + Duration.ofNanos(drift).toMillis()
        + "ms)";
  }
}
