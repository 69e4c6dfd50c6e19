package dev.redlock;

import dev.redlock.config.RedlockConfig;
import dev.redlock.spi.LeaseStore;
import dev.redlock.timing.Validity;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/** The engine's checks of what callers pass, each naming the parameter and the rule. */
final class Arguments {
  private final RedlockConfig settings;
  private final LeaseStore<?> store;

  Arguments(RedlockConfig settings, LeaseStore<?> store) {
    this.settings = settings;
    this.store = store;
  }

  /** Checks a request's arguments; returns the ttl in milliseconds. */
  long one(String resource, Duration ttl) {
    Objects.requireNonNull(resource, "resource must not be null");
    if (resource.isBlank()) {
      throw new IllegalArgumentException("resource must not be blank, was '" + resource + "'");
    }
    store.checkResource(resource);
    return ttl(ttl);
  }

  /** Checks a multi-resource request's names; returns them sorted, as every store takes them. */
  List<String> sorted(Set<String> resources) {
    Objects.requireNonNull(resources, "resources must not be null");
    int size = resources.size();
    if (size == 0) {
      throw new IllegalArgumentException("resources must not be empty");
    }
    if (size > Redlock.MAX_RESOURCES) {
      throw new IllegalArgumentException(
          "resources must hold at most " + Redlock.MAX_RESOURCES + " names, was " + size);
    }
    String[] sorted = new String[size];
    int i = 0;
    for (String resource : resources) {
      if (i == size) { // a set whose size() lied: refuse it rather than guess
        throw new IllegalArgumentException("resources changed while being read");
      }
      if (resource == null) {
        throw new NullPointerException("resources must not contain null");
      }
      if (resource.isBlank()) {
        throw new IllegalArgumentException(
            "resources must not contain a blank name, was '" + resource + "'");
      }
      try {
        store.checkResource(resource);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("resources: " + e.getMessage(), e);
      }
      sorted[i++] = resource;
    }
    if (i != size) {
      throw new IllegalArgumentException("resources changed while being read");
    }
    Arrays.sort(sorted);
    for (int k = 1; k < sorted.length; k++) {
      if (sorted[k].equals(sorted[k - 1])) {
        throw new IllegalArgumentException(
            "resources must not hold a name twice (a set whose equality is not String's), '"
                + sorted[k]
                + "' is there twice");
      }
    }
    return List.of(sorted);
  }

  /** Checks a ttl against the node timeout, the drift allowance and {@code maxTtl}. */
  long ttl(Duration ttl) {
    long millis = Validity.checkTtl(ttl, settings.nodeTimeout(), settings.clockDriftFactor());
    if (ttl.compareTo(settings.maxTtl()) > 0) {
      throw new IllegalArgumentException(
          "ttl must be <= maxTtl ("
              + settings.maxTtl()
              + "), was "
              + ttl
              + "; raise maxTtl for every client of these nodes, or renew a shorter ttl (Lease.keepAlive)");
    }
    return millis;
  }

  /** Checks a {@code maxWait}; returns it in nanoseconds, or the longest past what a long holds. */
  static long maxWaitNanos(Duration maxWait) {
    Objects.requireNonNull(maxWait, "maxWait must not be null");
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("maxWait must be >= 0, was " + maxWait);
    }
    return saturatedNanos(maxWait);
  }

  /** {@code duration} in nanoseconds, or {@link Long#MAX_VALUE} past what a long holds. */
  static long saturatedNanos(Duration duration) {
    try {
      return duration.toNanos();
    } catch (ArithmeticException tooLong) {
      return Long.MAX_VALUE;
    }
  }

  /**
   * Checks that a lease of this ttl can be renewed, and returns the renewal interval: a renewal
   * starts {@code ttl × renewalFraction} after the previous one and, after an acquisition's round
   * and its own, must be decided before the validity ends.
   */
  long renewable(Duration ttl) {
    long ttlMillis = ttl(ttl);
    long ttlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMillis);
    long interval = (long) (ttlNanos * settings.renewalFraction());
    long drift = Validity.driftNanos(ttlMillis, settings.clockDriftFactor());
    long round = settings.nodeTimeout().toNanos();
    if (interval < round || ttlNanos - interval <= drift + 2 * round) {
      throw new IllegalArgumentException(
          String.format(
              Locale.ROOT,
              "ttl too short to renew: ttl × renewalFraction must be >= nodeTimeout (%d ms) and"
                  + " ttl × (1 - renewalFraction) must be > clock drift + 2 × nodeTimeout (%d ms +"
                  + " %d ms), was %s with renewalFraction %.3f",
              settings.nodeTimeout().toMillis(),
              TimeUnit.NANOSECONDS.toMillis(drift),
              2 * settings.nodeTimeout().toMillis(),
              ttl,
              settings.renewalFraction()));
    }
    return interval;
  }
}
