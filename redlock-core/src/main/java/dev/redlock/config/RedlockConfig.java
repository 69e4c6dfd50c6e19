package dev.redlock.config;

import static dev.redlock.config.ConfigValues.between;
import static dev.redlock.config.ConfigValues.check;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.Redlock;
import dev.redlock.RedlockListener;
import dev.redlock.node.NodeKeys;
import dev.redlock.node.NodeUri;
import dev.redlock.spi.LeaseStore;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Function;
import javax.net.ssl.SSLSocketFactory;

/**
 * The immutable, validated configuration of a {@link Redlock}: where the leases are kept (Redis
 * nodes, or a {@linkplain Builder#store store}), and how leases behave.
 *
 * <pre>{@code
 * RedlockConfig config = RedlockConfig.builder()
 *     .nodes(List.of("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379"))
 *     .nodeTimeout(Duration.ofMillis(50))
 *     .build();
 * }</pre>
 *
 * <p>Every builder method checks its own argument and {@link Builder#build()} the rules that span
 * fields; nothing is corrected silently.
 */
public final class RedlockConfig {
  /** Default key prefix, so lock keys are easy to find and to keep apart from other data. */
  public static final String DEFAULT_KEY_PREFIX = "redlock:";

  /** Default size of each node's connection pool. */
  public static final int DEFAULT_MAX_CONNECTIONS_PER_NODE = 4;

  /** Default bound on making one connection: TCP, TLS handshake, credentials, the node's life. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(2);

  /** Default clock-drift factor: 1% of the ttl (plus a fixed 2 ms). */
  public static final double DEFAULT_CLOCK_DRIFT_FACTOR = 0.01;

  /** Default longest ttl, and so how long a node with young data stays out of votes. */
  public static final Duration DEFAULT_MAX_TTL = Duration.ofMinutes(1);

  private static final Duration MILLISECOND = Duration.ofMillis(1);
  private static final Duration MINUTE = Duration.ofMinutes(1);

  // A checked copy no builder holds, so nothing changes it; the final field publishes it safely.
  private final ConfigValues v;

  private RedlockConfig(ConfigValues values) {
    this.v = values;
  }

  /** Starts a builder with every default set, and no nodes nor store. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads a configuration from properties, one key per builder method (docs/configuration.md):
   * {@code redlock.nodes} (comma separated, required), {@code redlock.quorum}, {@code
   * redlock.keyPrefix}, {@code redlock.clockDriftFactor}, {@code redlock.nodeTimeout}, {@code
   * redlock.retryDelay}, {@code redlock.retryJitter}, {@code redlock.maxAttemptsInFlight}, {@code
   * redlock.maxConnectionsPerNode}, {@code redlock.connectTimeout}, {@code
   * redlock.renewalFraction}, {@code redlock.maxHold}, {@code redlock.taskInterruption} ({@code
   * ON_LEASE_LOSS} or {@code NEVER}), {@code redlock.maxTtl}, {@code redlock.restartGuard} ({@code
   * on}, {@code trust_fsynced_aof_restarts}, {@code off}) and {@code redlock.auditLog} ({@code
   * true} adds {@link RedlockListener#auditLog()}). Durations are written {@code 50ms}, {@code 2s},
   * {@code 1m}, {@code 1h} or ISO-8601 ({@code PT0.05S}). Keys outside {@code redlock.} are
   * ignored; an unknown key inside it is an error. For a {@linkplain Builder#store store}, set the
   * store, then {@link Builder#properties}.
   *
   * @throws NullPointerException if {@code properties} is null
   * @throws IllegalArgumentException naming the key and the rule, for a missing, unknown or
   *     malformed value
   */
  public static RedlockConfig fromProperties(Properties properties) {
    return ConfigProperties.apply(properties, builder(), false, false).build();
  }

  /**
   * Every property key {@link #fromProperties} reads, in the order of docs/configuration.md's
   * table: for a framework that binds its own configuration onto them.
   *
   * @return the keys, each starting with {@code redlock.}
   */
  public static List<String> propertyKeys() {
    return ConfigProperties.keys();
  }

  /**
   * Parses a duration as {@link #fromProperties} does: {@code 50ms}, {@code 2s}, {@code 1m}, {@code
   * 1h} or ISO-8601 ({@code PT0.05S}).
   *
   * @throws NullPointerException if {@code text} is null
   * @throws IllegalArgumentException naming the forms accepted
   */
  public static Duration parseDuration(String text) {
    return ConfigProperties.DURATION.apply(
        "duration", Objects.requireNonNull(text, "text must not be null"));
  }

  /** The nodes, as URIs without credentials, in configured order; empty with a store. */
  public List<String> nodes() {
    return v.nodes.stream().map(NodeUri::toString).toList();
  }

  /**
   * The nodes' URIs as configured, credentials included, for a tool that connects to them; never
   * log them ({@link #nodes()} is the form for people). Empty with a store.
   */
  public List<String> connectionUris() {
    return v.nodes.stream().map(NodeUri::withCredentials).toList();
  }

  /** How many nodes must agree; 0 with a {@linkplain Builder#store store}, which counts its own. */
  public int quorum() {
    return v.quorum;
  }

  /** The prefix put before every resource name to form the Redis key. */
  public String keyPrefix() {
    return v.keyPrefix;
  }

  /** How many connections this client opens to each node, shared by every caller. */
  public int maxConnectionsPerNode() {
    return v.maxConnectionsPerNode;
  }

  /** The bound on making one connection to a node (see {@link Builder#connectTimeout}). */
  public Duration connectTimeout() {
    return v.connectTimeout;
  }

  /** What makes the TLS sockets of {@code rediss://} nodes; empty: the JVM's default. */
  public Optional<SSLSocketFactory> tlsSocketFactory() {
    return Optional.ofNullable(v.tlsSocketFactory);
  }

  /** What the restart guard trusts: {@link RestartGuard#ON} unless set. */
  public RestartGuard restartGuard() {
    return v.restartGuard;
  }

  /**
   * What makes the store ({@link Builder#store}), called once by {@link Redlock#create} with the
   * {@link #nodeTimeout()}; empty over Redis nodes.
   */
  public Optional<Function<Duration, ? extends LeaseStore<?>>> store() {
    return Optional.ofNullable(v.store);
  }

  /** The bound on one request to the store (see {@link Builder#nodeTimeout}). */
  public Duration nodeTimeout() {
    return v.nodeTimeout;
  }

  /** The clock drift allowed, as a fraction of the ttl (see {@link Builder#clockDriftFactor}). */
  public double clockDriftFactor() {
    return v.clockDriftFactor;
  }

  /** The base delay between two attempts of {@link Redlock#acquire}. */
  public Duration retryDelay() {
    return v.retryDelay;
  }

  /** The upper bound of the random extra delay added to each retry. */
  public Duration retryJitter() {
    return v.retryJitter;
  }

  /** How many attempts may be on the store at once (see {@link Builder#maxAttemptsInFlight}). */
  public int maxAttemptsInFlight() {
    return v.maxAttemptsInFlight;
  }

  /** How often a renewed lease is extended, as a fraction of its ttl. */
  public double renewalFraction() {
    return v.renewalFraction;
  }

  /** The longest a renewed lease is kept alive, counted from its grant; then it is lost. */
  public Duration maxHold() {
    return v.maxHold;
  }

  /** Whether {@link Redlock#withLock} interrupts its task's thread when the lease is lost. */
  public TaskInterruption taskInterruption() {
    return v.taskInterruption;
  }

  /** The longest ttl a lease may ask for (see {@link Builder#maxTtl}). */
  public Duration maxTtl() {
    return v.maxTtl;
  }

  /** The listeners of the lock's events, in the order they were added; unmodifiable. */
  public List<RedlockListener> listeners() {
    return v.listeners;
  }

  @Override
  public String toString() {
    return v.toString();
  }

  /**
   * Builds a {@link RedlockConfig}; not thread-safe. The leases are kept on Redis {@linkplain #node
   * nodes} or in a {@linkplain #store store}, never both. With a store, these Redis settings are
   * ignored: {@link #quorum}, {@link #keyPrefix}, {@link #maxConnectionsPerNode}, {@link
   * #connectTimeout}, {@link #tlsSocketFactory} and {@link #restartGuard}.
   */
  public static final class Builder {
    private final ConfigValues v = new ConfigValues();

    private Builder() {}

    /**
     * Sets what {@code redlock.*} properties say, as {@link RedlockConfig#fromProperties} reads
     * them, on top of this builder's settings. {@code redlock.nodes} is required unless nodes or a
     * store were set before; with a store, a key of the Redis nodes alone is an error.
     *
     * @throws NullPointerException if {@code properties} is null
     * @throws IllegalArgumentException naming the key and the rule, for a missing, unknown or
     *     malformed value, or a key of the Redis nodes alone when a store is set
     */
    public Builder properties(Properties properties) {
      ConfigProperties.apply(properties, this, !v.nodes.isEmpty(), v.store != null);
      return this;
    }

    /**
     * Keeps the leases in a store instead of on Redis nodes, such as a SQL table ({@code
     * redlock-jdbc}). {@link Redlock#create} calls {@code store} once with {@link
     * RedlockConfig#nodeTimeout()}, which bounds the store's requests; the Redlock closes it.
     *
     * @param store makes the store, given the node timeout; it must not return null
     * @throws NullPointerException if {@code store} is null
     */
    public Builder store(Function<Duration, ? extends LeaseStore<?>> store) {
      v.store = Objects.requireNonNull(store, "store must not be null");
      return this;
    }

    /**
     * Adds a node: {@code redis://[user:password@]host[:port][/db]}, or {@code rediss://} for TLS.
     * The port defaults to 6379.
     *
     * @throws NullPointerException if {@code uri} is null
     * @throws IllegalArgumentException if {@code uri} is malformed
     */
    public Builder node(String uri) {
      v.nodes.add(NodeUri.parse(uri));
      return this;
    }

    /**
     * Adds several nodes, as {@link #node(String)} does for each.
     *
     * @throws NullPointerException if {@code uris} or any element is null
     * @throws IllegalArgumentException if any element is malformed
     */
    public Builder nodes(Collection<String> uris) {
      Objects.requireNonNull(uris, "nodes must not be null").forEach(this::node);
      return this;
    }

    /**
     * Sets how many nodes must agree. Default: a majority, N/2+1; at most N, never below a majority
     * (two minorities could both win).
     *
     * @throws IllegalArgumentException if {@code quorum < 1}; {@link #build()} checks it against N
     */
    public Builder quorum(int quorum) {
      v.quorum = check("quorum", quorum, quorum >= 1, ">= 1");
      return this;
    }

    /**
     * Sets the prefix put before every resource name to form the key. Default {@value
     * #DEFAULT_KEY_PREFIX}. Every client of a resource must use the same prefix, and two prefixes
     * on the same nodes must not be prefixes of one another (one key, two fencing counters).
     *
     * @throws NullPointerException if {@code keyPrefix} is null
     * @throws IllegalArgumentException if it contains {@code @}, which marks the nodes' own keys
     *     (the life marker, fencing counters)
     */
    public Builder keyPrefix(String keyPrefix) {
      v.keyPrefix =
          NodeKeys.checkKeyPrefix(Objects.requireNonNull(keyPrefix, "keyPrefix must not be null"));
      return this;
    }

    /**
     * Sets the clock-drift factor: a lease's validity is shortened by ttl × factor + 2 ms, for node
     * clocks running at different rates. Default 0.01.
     *
     * @throws IllegalArgumentException unless {@code 0 <= factor < 0.5}
     */
    public Builder clockDriftFactor(double factor) {
      v.clockDriftFactor =
          check("clockDriftFactor", factor, factor >= 0 && factor < 0.5, ">= 0 and < 0.5");
      return this;
    }

    /**
     * Sets the bound on one request to one node and on the wait for one round of votes; a slower
     * node counts as failed for that round. Every ttl must exceed nodeTimeout + drift. Default 50
     * ms. With a {@link #store}, the bound the store puts on its requests.
     *
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException unless it is between 1 ms and 1 minute
     */
    public Builder nodeTimeout(Duration timeout) {
      v.nodeTimeout = between("nodeTimeout", timeout, MILLISECOND, MINUTE, ">= 1ms and <= 1m");
      return this;
    }

    /**
     * Sets the base delay between attempts in {@link Redlock#acquire}. Default 200 ms.
     *
     * @throws NullPointerException if {@code delay} is null
     * @throws IllegalArgumentException if it is below 1 ms (that would be a busy loop)
     */
    public Builder retryDelay(Duration delay) {
      v.retryDelay = between("retryDelay", delay, MILLISECOND, null, ">= 1ms");
      return this;
    }

    /**
     * Sets the upper bound of a random delay added to each retry, so contenders desynchronise.
     * Default 100 ms.
     *
     * @throws NullPointerException if {@code jitter} is null
     * @throws IllegalArgumentException if it is negative
     */
    public Builder retryJitter(Duration jitter) {
      v.retryJitter = between("retryJitter", jitter, Duration.ZERO, null, ">= 0");
      return this;
    }

    /**
     * Sets how many acquisition attempts this client may have on the store at once. Default: 8 per
     * processor, at most 64. More wait their turn in arrival order before their validity clock
     * starts, rather than queue on the nodes past {@code nodeTimeout}. Releases, extends and
     * renewals never wait.
     *
     * @throws IllegalArgumentException if it is below 1 or above 65,536
     */
    public Builder maxAttemptsInFlight(int attempts) {
      v.maxAttemptsInFlight = between("maxAttemptsInFlight", attempts, 1, 65_536);
      return this;
    }

    /**
     * Sets how many connections this client opens to each node, shared by every caller (requests
     * are pipelined). Up to 256 requests may be in flight on one; past that a request fails at
     * once. Default 4.
     *
     * @throws IllegalArgumentException if it is below 1 or above 64
     */
    public Builder maxConnectionsPerNode(int max) {
      v.maxConnectionsPerNode = between("maxConnectionsPerNode", max, 1, 64);
      return this;
    }

    /**
     * Sets the bound on each step of making one connection to a node: TCP connect, TLS handshake,
     * each reply of the handshake. A new {@link Redlock}'s first attempt waits for its first
     * connections up to this. Default 2 s.
     *
     * @throws NullPointerException if {@code timeout} is null
     * @throws IllegalArgumentException unless it is between 1 ms and 1 minute
     */
    public Builder connectTimeout(Duration timeout) {
      v.connectTimeout =
          between("connectTimeout", timeout, MILLISECOND, MINUTE, ">= 1ms and <= 1m");
      return this;
    }

    /**
     * Sets what makes the TLS sockets of {@code rediss://} nodes, for a trust store of the
     * application's own ({@code sslContext.getSocketFactory()}). Hostname verification is always
     * on: the certificate must name the host the URI names (an IP needs that IP as a subject
     * alternative name). A factory that trusts anything defeats it: never outside a test.
     *
     * @throws NullPointerException if {@code factory} is null
     */
    public Builder tlsSocketFactory(SSLSocketFactory factory) {
      v.tlsSocketFactory = Objects.requireNonNull(factory, "tlsSocketFactory must not be null");
      return this;
    }

    /**
     * Sets how often a renewed lease ({@link Lease#keepAlive()}) is extended, as a fraction of its
     * ttl. Default 1/3: two renewals can fail before the lease runs out.
     *
     * @throws IllegalArgumentException unless {@code 0 < fraction <= 0.5}
     */
    public Builder renewalFraction(double fraction) {
      v.renewalFraction =
          check("renewalFraction", fraction, fraction > 0 && fraction <= 0.5, "> 0 and <= 0.5");
      return this;
    }

    /**
     * Sets the longest a renewed lease is kept alive, from its grant; then it is lost ({@link
     * LeaseLostException.Reason#MAX_HOLD_REACHED}), so a hung job cannot hold a lock forever.
     * Default 1 hour.
     *
     * @throws NullPointerException if {@code maxHold} is null
     * @throws IllegalArgumentException if it is not positive
     */
    public Builder maxHold(Duration maxHold) {
      v.maxHold = between("maxHold", maxHold, Duration.ofNanos(1), null, "> 0");
      return this;
    }

    /**
     * Sets whether {@link Redlock#withLock} interrupts its task's thread when the lease is lost.
     * Default {@link TaskInterruption#ON_LEASE_LOSS}.
     *
     * @throws NullPointerException if {@code interruption} is null
     */
    public Builder taskInterruption(TaskInterruption interruption) {
      v.taskInterruption =
          Objects.requireNonNull(interruption, "taskInterruption must not be null");
      return this;
    }

    /**
     * Sets the longest ttl a lease may ask for. Every client of the nodes must use the same: it is
     * also how long a node whose data is younger (restarted, flushed, new) stays out of votes,
     * since it may have forgotten a lock. Default 1 minute.
     *
     * @throws NullPointerException if {@code maxTtl} is null
     * @throws IllegalArgumentException unless it is between 1 ms and 1 day
     */
    public Builder maxTtl(Duration maxTtl) {
      v.maxTtl = between("maxTtl", maxTtl, MILLISECOND, Duration.ofDays(1), ">= 1ms and <= 1d");
      return this;
    }

    /**
     * Adds a listener for the lock's events, such as {@link RedlockListener#auditLog()}.
     *
     * @throws NullPointerException if {@code listener} is null
     */
    public Builder listener(RedlockListener listener) {
      v.listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
      return this;
    }

    /**
     * Sets what the restart guard trusts. Default: {@link RestartGuard#ON}, always safe.
     *
     * @throws NullPointerException if {@code policy} is null
     */
    public Builder restartGuard(RestartGuard policy) {
      v.restartGuard = Objects.requireNonNull(policy, "restartGuard must not be null");
      return this;
    }

    /**
     * Checks the rules that span fields and returns the configuration.
     *
     * @throws IllegalArgumentException if there are both nodes and a store, or neither; if a node
     *     is listed twice, or the quorum is below a majority or above the node count; or if {@code
     *     maxTtl} leaves no valid ttl (it must exceed {@code nodeTimeout} plus the clock drift)
     */
    public RedlockConfig build() {
      return new RedlockConfig(v.checked());
    }
  }
}
