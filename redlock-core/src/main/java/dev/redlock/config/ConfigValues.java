package dev.redlock.config;

import dev.redlock.RedlockListener;
import dev.redlock.node.NodeUri;
import dev.redlock.spi.LeaseStore;
import dev.redlock.timing.Validity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.StringJoiner;
import java.util.function.Function;
import javax.net.ssl.SSLSocketFactory;

/**
 * The settings of a {@link RedlockConfig} with their defaults, and the rules they keep: a builder's
 * to change, and a checked copy in each config it builds, which nothing changes after. Each rule is
 * checked once, its error naming the parameter and the rule: a setting's own by its builder method
 * ({@link #check}, {@link #between}), those that span settings by {@link #checked()}.
 */
final class ConfigValues implements Cloneable {
  List<NodeUri> nodes = new ArrayList<>();
  int quorum; // 0: the default majority, computed by checked()
  String keyPrefix = RedlockConfig.DEFAULT_KEY_PREFIX;
  int maxConnectionsPerNode = RedlockConfig.DEFAULT_MAX_CONNECTIONS_PER_NODE;
  Duration connectTimeout = RedlockConfig.DEFAULT_CONNECT_TIMEOUT;
  SSLSocketFactory tlsSocketFactory;
  RestartGuard restartGuard = RestartGuard.ON;
  Function<Duration, ? extends LeaseStore<?>> store;
  Duration nodeTimeout = Duration.ofMillis(50);
  double clockDriftFactor = RedlockConfig.DEFAULT_CLOCK_DRIFT_FACTOR;
  Duration retryDelay = Duration.ofMillis(200);
  Duration retryJitter = Duration.ofMillis(100);
  int maxAttemptsInFlight = defaultMaxAttemptsInFlight();
  double renewalFraction = 1.0 / 3;
  Duration maxHold = Duration.ofHours(1); // long for batch jobs, short of a hung working day
  TaskInterruption taskInterruption = TaskInterruption.ON_LEASE_LOSS;
  Duration maxTtl = RedlockConfig.DEFAULT_MAX_TTL;
  List<RedlockListener> listeners = new ArrayList<>();

  static int defaultMaxAttemptsInFlight() {
    return defaultMaxAttemptsInFlight(Runtime.getRuntime().availableProcessors());
  }

  /**
   * 8 per processor: more than the processors move along within the timeout only queue, and their
   * replies come too late to count. At most 64: enough for the nodes to bound throughput, and a
   * round waits behind at most 63 others.
   */
  static int defaultMaxAttemptsInFlight(int processors) {
    return Math.min(64, 8 * Math.max(1, processors));
  }

  /** {@code value}, if {@code holds}; else an error naming {@code name}, the rule and the value. */
  static <T> T check(String name, T value, boolean holds, String rule) {
    if (!holds) {
      throw new IllegalArgumentException(name + " must be " + rule + ", was " + value);
    }
    return value;
  }

  /** {@code value}, if not null and between {@code min} and {@code max} (null: no upper bound). */
  static Duration between(String name, Duration value, Duration min, Duration max, String rule) {
    Objects.requireNonNull(value, name + " must not be null");
    return check(
        name, value, value.compareTo(min) >= 0 && (max == null || value.compareTo(max) <= 0), rule);
  }

  static int between(String name, int value, int min, int max) {
    return check(name, value, value >= min && value <= max, ">= " + min + " and <= " + max);
  }

  /**
   * A copy for a config, once the rules that span settings hold: nodes or a store, not both; the
   * nodes distinct and the quorum a majority of them at least; some ttl valid under {@code maxTtl}.
   */
  ConfigValues checked() {
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
    int checkedQuorum = store != null ? 0 : quorumOfDistinctNodes();
    String floor = Validity.floorBroken(maxTtl.toMillis(), nodeTimeout, clockDriftFactor);
    if (floor != null) {
      throw new IllegalArgumentException(
          "maxTtl leaves no valid ttl: a ttl must be > "
              + floor
              + " and <= maxTtl, was "
              + maxTtl
              + "; raise maxTtl or lower nodeTimeout");
    }
    try {
      ConfigValues copy = (ConfigValues) clone();
      copy.quorum = checkedQuorum;
      copy.nodes = List.copyOf(nodes);
      copy.listeners = List.copyOf(listeners);
      return copy;
    } catch (CloneNotSupportedException e) {
      throw new AssertionError(e); // this class is Cloneable
    }
  }

  private int quorumOfDistinctNodes() {
    HashSet<NodeUri> seen = new HashSet<>();
    for (NodeUri node : nodes) {
      if (!seen.add(node)) {
        throw new IllegalArgumentException(
            "nodes must be distinct servers, but " + node + " is listed twice");
      }
    }
    int n = nodes.size();
    int majority = n / 2 + 1;
    int q = quorum == 0 ? majority : quorum;
    String rule = ">= " + majority + " (a majority of " + n + " nodes) and <= " + n;
    return check("quorum", q, q >= majority && q <= n, rule);
  }

  /** {@link RedlockConfig#toString}: the settings that apply, without credentials. */
  @Override
  public String toString() {
    boolean redis = store == null;
    StringJoiner s = new StringJoiner(", ", "RedlockConfig{", "}");
    if (redis) {
      s.add("nodes=" + nodes).add("quorum=" + quorum).add("keyPrefix='" + keyPrefix + "'");
    } else {
      s.add("store=" + store);
    }
    s.add("clockDriftFactor=" + clockDriftFactor).add("nodeTimeout=" + nodeTimeout);
    s.add("retryDelay=" + retryDelay).add("retryJitter=" + retryJitter);
    s.add("maxAttemptsInFlight=" + maxAttemptsInFlight);
    if (redis) {
      s.add("maxConnectionsPerNode=" + maxConnectionsPerNode);
      s.add("connectTimeout=" + connectTimeout);
    }
    s.add("renewalFraction=" + renewalFraction).add("maxHold=" + maxHold);
    s.add("taskInterruption=" + taskInterruption).add("maxTtl=" + maxTtl);
    if (redis && tlsSocketFactory != null) {
      s.add("tlsSocketFactory=" + tlsSocketFactory.getClass().getName());
    }
    if (redis && restartGuard != RestartGuard.ON) {
      s.add("restartGuard=" + restartGuard);
    }
    return s.toString();
  }
}
