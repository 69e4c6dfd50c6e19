package dev.redlock;

import dev.redlock.node.NodeUri;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The defaults that need a reason, the rules {@link RedlockConfig.Builder} checks, and how a config
 * describes itself.
 */
final class ConfigRules {
  static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofMillis(50);
  static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(200);
  static final Duration DEFAULT_RETRY_JITTER = Duration.ofMillis(100);

  /** Renew three times per ttl: two renewals may fail to arrive before the lease runs out. */
  static final double DEFAULT_RENEWAL_FRACTION = 1.0 / 3;

  /** Long enough for batch jobs; short enough that a hung job cannot block a working day. */
  static final Duration DEFAULT_MAX_HOLD = Duration.ofHours(1);

  /**
   * Attempts in flight per processor: more than the processors can move along within the timeout
   * only queue, and their replies come too late to count.
   */
  static final int ATTEMPTS_IN_FLIGHT_PER_PROCESSOR = 8;

  /** Enough for the nodes to bound throughput; a round waits behind at most 63 others. */
  static final int ATTEMPTS_IN_FLIGHT_CEILING = 64;

  static final int MAX_ATTEMPTS_IN_FLIGHT = 65_536;

  private ConfigRules() {}

  /** 8 per processor the JVM may use, at most 64. */
  static int defaultMaxAttemptsInFlight() {
    return defaultMaxAttemptsInFlight(Runtime.getRuntime().availableProcessors());
  }

  static int defaultMaxAttemptsInFlight(int processors) {
    return Math.min(
        ATTEMPTS_IN_FLIGHT_CEILING, ATTEMPTS_IN_FLIGHT_PER_PROCESSOR * Math.max(1, processors));
  }

  /** {@code value}, if between {@code min} and {@code max} ({@code max} null: no upper bound). */
  static Duration between(String name, Duration value, Duration min, Duration max, String rule) {
    Objects.requireNonNull(value, name + " must not be null");
    if (value.compareTo(min) < 0 || (max != null && value.compareTo(max) > 0)) {
      throw new IllegalArgumentException(name + " must be " + rule + ", was " + value);
    }
    return value;
  }

  static int between(String name, int value, int min, int max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          name + " must be >= " + min + " and <= " + max + ", was " + value);
    }
    return value;
  }

  /** {@code value}, if {@code holds}; else the rule, named. */
  static double fraction(String name, double value, boolean holds, String rule) {
    if (!holds) {
      throw new IllegalArgumentException(name + " must be " + rule + ", was " + value);
    }
    return value;
  }

  /** The quorum for {@code nodes}: {@code requested}, or a majority if 0; checks both. */
  static int quorum(List<NodeUri> nodes, int requested) {
    Set<NodeUri> seen = new HashSet<>();
    for (NodeUri node : nodes) {
      if (!seen.add(node)) {
        throw new IllegalArgumentException(
            "nodes must be distinct servers, but " + node + " is listed twice");
      }
    }
    int n = nodes.size();
    int majority = n / 2 + 1;
    int q = requested == 0 ? majority : requested;
    if (q < majority || q > n) {
      throw new IllegalArgumentException(
          "quorum must be >= "
              + majority
              + " (a majority of "
              + n
              + " nodes) and <= "
              + n
              + ", was "
              + q);
    }
    return q;
  }

  /** The largest ttl, {@code maxTtl}, must exceed {@code nodeTimeout} plus its own drift. */
  static void maxTtlLeavesAValidTtl(Duration maxTtl, Duration nodeTimeout, double driftFactor) {
    long largestMillis = maxTtl.toMillis(); // the largest whole-millisecond ttl allowed
    long drift = Validity.driftNanos(largestMillis, driftFactor);
    if (TimeUnit.MILLISECONDS.toNanos(largestMillis) <= nodeTimeout.toNanos() + drift) {
      throw new IllegalArgumentException(
          "maxTtl leaves no valid ttl: a ttl must be > nodeTimeout + clock drift ("
              + nodeTimeout.toMillis()
              + "ms + "
              + TimeUnit.NANOSECONDS.toMillis(drift)
              + "ms) and <= maxTtl, was "
              + maxTtl
              + "; raise maxTtl or lower nodeTimeout");
    }
  }

  /** Leases are kept on nodes or in a store: exactly one of the two is set. */
  static void nodesOrStore(List<NodeUri> nodes, Object store) {
    if (store != null && !nodes.isEmpty()) {
      throw new IllegalArgumentException(
          "nodes and store are both set: the leases are kept either on Redis nodes or in a"
              + " store, not both; remove the nodes "
              + nodes
              + " or the store "
              + store);
    }
    if (store == null && nodes.isEmpty()) {
      throw new IllegalArgumentException(
          "nodes must not be empty: add at least one node (3 or 5 for fault tolerance), or set a"
              + " store");
    }
  }

  /** {@link RedlockConfig#toString}: the settings that apply, without credentials. */
  static String describe(RedlockConfig c, Object store) {
    boolean redis = store == null;
    return String.format(
        "RedlockConfig{%s, clockDriftFactor=%s, nodeTimeout=%s, retryDelay=%s, retryJitter=%s,"
            + " maxAttemptsInFlight=%s%s, renewalFraction=%s, maxHold=%s, taskInterruption=%s,"
            + " maxTtl=%s%s%s}",
        redis
            ? "nodes="
                + c.nodes()
                + ", quorum="
                + c.quorum()
                + ", keyPrefix='"
                + c.keyPrefix()
                + "'"
            : "store=" + store,
        c.clockDriftFactor(),
        c.nodeTimeout(),
        c.retryDelay(),
        c.retryJitter(),
        c.maxAttemptsInFlight(),
        redis
            ? ", maxConnectionsPerNode="
                + c.maxConnectionsPerNode()
                + ", connectTimeout="
                + c.connectTimeout()
            : "",
        c.renewalFraction(),
        c.maxHold(),
        c.taskInterruption(),
        c.maxTtl(),
        redis && c.tlsSocketFactory().isPresent()
            ? ", tlsSocketFactory=" + c.tlsSocketFactory().get().getClass().getName()
            : "",
        redis && c.restartGuard() != RestartGuard.ON ? ", restartGuard=" + c.restartGuard() : "");
  }
}
