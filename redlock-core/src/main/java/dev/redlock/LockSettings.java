package dev.redlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * How leases behave, whatever store keeps them: the timeout per request ({@code nodeTimeout}), the
 * clock drift allowance, retries, renewal, the longest hold and ttl, interruption, listeners.
 * Immutable and validated. Not API: {@link RedlockConfig} is the one configuration type; it keeps
 * one of these for the {@link LeaseEngine}, and its builder sets this builder.
 */
final class LockSettings {
  /** Default bound on one request to the store: {@code nodeTimeout}. */
  static final Duration DEFAULT_NODE_TIMEOUT = Duration.ofMillis(50);

  /** Default base delay between attempts in {@code acquire}. */
  static final Duration DEFAULT_RETRY_DELAY = Duration.ofMillis(200);

  /** Default random extra delay added to each retry. */
  static final Duration DEFAULT_RETRY_JITTER = Duration.ofMillis(100);

  /** Default renewal interval, as a fraction of the ttl: renew three times per ttl. */
  static final double DEFAULT_RENEWAL_FRACTION = 1.0 / 3;

  /**
   * Default longest hold of a renewed lease: one hour. Long enough for the batch jobs this library
   * is for; short enough that a hung job cannot block a resource for a working day. Jobs that
   * legitimately run longer raise it explicitly.
   */
  static final Duration DEFAULT_MAX_HOLD = Duration.ofHours(1);

  /**
   * The default {@link Builder#maxAttemptsInFlight} per processor the JVM may use: 8. An attempt in
   * flight needs a processor for a moment at every step (writing, reading each reply, deciding);
   * more attempts than the processors can move along within the timeout only queue for them, and
   * while they do their replies wait in the sockets and count for nothing once the timeout has
   * passed. On a 2-core machine, 256 threads with 64 attempts in flight failed up to 76 of ~10,000
   * attempts on healthy nodes (some in four of six loaded runs), with 16 at most one, at the same
   * throughput (docs/performance.md).
   */
  static final int DEFAULT_ATTEMPTS_IN_FLIGHT_PER_PROCESSOR = 8;

  /**
   * The largest default {@link Builder#maxAttemptsInFlight}, whatever the processors: 64. Enough
   * for the nodes to be the bound on throughput (64 rounds of about 0.4 ms at N=5), few enough that
   * a round waits behind at most 63 others on each node, well within the default timeout.
   */
  static final int DEFAULT_MAX_ATTEMPTS_IN_FLIGHT_CEILING = 64;

  /** The largest {@link Builder#maxAttemptsInFlight} accepted. */
  static final int MAX_ATTEMPTS_IN_FLIGHT = 65_536;

  /**
   * The default {@link Builder#maxAttemptsInFlight} on this JVM now: {@value
   * #DEFAULT_ATTEMPTS_IN_FLIGHT_PER_PROCESSOR} per processor it may use ({@link
   * Runtime#availableProcessors()}, which follows a container's CPU limit), at most {@value
   * #DEFAULT_MAX_ATTEMPTS_IN_FLIGHT_CEILING}: 16 on 2 cores, 64 on 8 or more.
   */
  static int defaultMaxAttemptsInFlight() {
    return defaultMaxAttemptsInFlight(Runtime.getRuntime().availableProcessors());
  }

  /** {@link #defaultMaxAttemptsInFlight()} for {@code processors} processors (at least one). */
  static int defaultMaxAttemptsInFlight(int processors) {
    return Math.min(
        DEFAULT_MAX_ATTEMPTS_IN_FLIGHT_CEILING,
        DEFAULT_ATTEMPTS_IN_FLIGHT_PER_PROCESSOR * Math.max(1, processors));
  }

  private final Duration timeout;
  private final double clockDriftFactor;
  private final Duration retryDelay;
  private final Duration retryJitter;
  private final int maxAttemptsInFlight;
  private final double renewalFraction;
  private final Duration maxHold;
  private final TaskInterruption taskInterruption;
  private final Duration maxTtl;
  private final List<RedlockListener> listeners;

  private LockSettings(Builder b) {
    this.timeout = b.timeout;
    this.clockDriftFactor = b.clockDriftFactor;
    this.retryDelay = b.retryDelay;
    this.retryJitter = b.retryJitter;
    this.maxAttemptsInFlight = b.maxAttemptsInFlight;
    this.renewalFraction = b.renewalFraction;
    this.maxHold = b.maxHold;
    this.taskInterruption = b.taskInterruption;
    this.maxTtl = b.maxTtl;
    this.listeners = List.copyOf(b.listeners);
  }

  /** A builder with every default: the defaults of every store, Redis included. */
  static Builder builder() {
    return new Builder();
  }

  /** The longest one request to the store may take: {@code nodeTimeout}. */
  Duration nodeTimeout() {
    return timeout;
  }

  double clockDriftFactor() {
    return clockDriftFactor;
  }

  Duration retryDelay() {
    return retryDelay;
  }

  Duration retryJitter() {
    return retryJitter;
  }

  /**
   * How many acquisition attempts of one service may be on the store at once; more wait their turn,
   * in arrival order, before their attempt starts ({@link Builder#maxAttemptsInFlight}).
   */
  int maxAttemptsInFlight() {
    return maxAttemptsInFlight;
  }

  double renewalFraction() {
    return renewalFraction;
  }

  Duration maxHold() {
    return maxHold;
  }

  TaskInterruption taskInterruption() {
    return taskInterruption;
  }

  Duration maxTtl() {
    return maxTtl;
  }

  List<RedlockListener> listeners() {
    return listeners;
  }

  /** Builds {@link LockSettings}; every setter checks its value at once and names the rule. */
  static final class Builder {
    private Duration timeout = DEFAULT_NODE_TIMEOUT;
    private double clockDriftFactor = RedlockConfig.DEFAULT_CLOCK_DRIFT_FACTOR;
    private Duration retryDelay = DEFAULT_RETRY_DELAY;
    private Duration retryJitter = DEFAULT_RETRY_JITTER;
    private int maxAttemptsInFlight = defaultMaxAttemptsInFlight();
    private double renewalFraction = DEFAULT_RENEWAL_FRACTION;
    private Duration maxHold = DEFAULT_MAX_HOLD;
    private TaskInterruption taskInterruption = TaskInterruption.ON_LEASE_LOSS;
    private Duration maxTtl = RedlockConfig.DEFAULT_MAX_TTL;
    private final List<RedlockListener> listeners = new ArrayList<>();

    private Builder() {}

    /**
     * The longest one request to the store may take, 1 ms to 1 min (default 50 ms). A lease's ttl
     * must exceed it, and a renewal must fit in the ttl with it.
     */
    Builder nodeTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "nodeTimeout must not be null");
      if (timeout.compareTo(Duration.ofMillis(1)) < 0
          || timeout.compareTo(Duration.ofMinutes(1)) > 0) {
        throw new IllegalArgumentException("nodeTimeout must be >= 1ms and <= 1m, was " + timeout);
      }
      this.timeout = timeout;
      return this;
    }

    /**
     * How much the store's clocks may drift relative to this one, as a fraction of the ttl, in [0,
     * 0.5) (default 0.01): validity is {@code ttl − elapsed − (ttl × factor + 2 ms)}.
     */
    Builder clockDriftFactor(double factor) {
      if (!(factor >= 0 && factor < 0.5)) {
        throw new IllegalArgumentException(
            "clockDriftFactor must be >= 0 and < 0.5, was " + factor);
      }
      this.clockDriftFactor = factor;
      return this;
    }

    /** The pause between attempts of {@code acquire}, at least 1 ms (default 200 ms). */
    Builder retryDelay(Duration delay) {
      Objects.requireNonNull(delay, "retryDelay must not be null");
      if (delay.compareTo(Duration.ofMillis(1)) < 0) {
        throw new IllegalArgumentException("retryDelay must be >= 1ms, was " + delay);
      }
      this.retryDelay = delay;
      return this;
    }

    /**
     * A random extra pause, from 0 to this, so contenders do not retry in step (default 100 ms).
     */
    Builder retryJitter(Duration jitter) {
      Objects.requireNonNull(jitter, "retryJitter must not be null");
      if (jitter.isNegative()) {
        throw new IllegalArgumentException("retryJitter must be >= 0, was " + jitter);
      }
      this.retryJitter = jitter;
      return this;
    }

    /**
     * How many acquisition attempts may be on the store at once, 1 to 65,536 (default {@link
     * #defaultMaxAttemptsInFlight()}): see {@link RedlockConfig.Builder#maxAttemptsInFlight}.
     */
    Builder maxAttemptsInFlight(int attempts) {
      if (attempts < 1 || attempts > MAX_ATTEMPTS_IN_FLIGHT) {
        throw new IllegalArgumentException(
            "maxAttemptsInFlight must be >= 1 and <= "
                + MAX_ATTEMPTS_IN_FLIGHT
                + ", was "
                + attempts);
      }
      this.maxAttemptsInFlight = attempts;
      return this;
    }

    /** A kept-alive lease is renewed every {@code ttl × fraction}, in (0, 0.5] (default 1/3). */
    Builder renewalFraction(double fraction) {
      if (!(fraction > 0 && fraction <= 0.5)) {
        throw new IllegalArgumentException(
            "renewalFraction must be > 0 and <= 0.5, was " + fraction);
      }
      this.renewalFraction = fraction;
      return this;
    }

    /** Renewal stops after this long, and the lease is lost (default 1 h). */
    Builder maxHold(Duration maxHold) {
      Objects.requireNonNull(maxHold, "maxHold must not be null");
      if (maxHold.isNegative() || maxHold.isZero()) {
        throw new IllegalArgumentException("maxHold must be > 0, was " + maxHold);
      }
      this.maxHold = maxHold;
      return this;
    }

    /** Whether {@code withLock} interrupts its task when the lease is lost (default: it does). */
    Builder taskInterruption(TaskInterruption interruption) {
      this.taskInterruption =
          Objects.requireNonNull(interruption, "taskInterruption must not be null");
      return this;
    }

    /** The longest ttl a lease may ask for, 1 ms to 1 day (default 1 min). */
    Builder maxTtl(Duration maxTtl) {
      Objects.requireNonNull(maxTtl, "maxTtl must not be null");
      if (maxTtl.compareTo(Duration.ofMillis(1)) < 0 || maxTtl.compareTo(Duration.ofDays(1)) > 0) {
        throw new IllegalArgumentException("maxTtl must be >= 1ms and <= 1d, was " + maxTtl);
      }
      this.maxTtl = maxTtl;
      return this;
    }

    /** Adds a listener for lock events. */
    Builder listener(RedlockListener listener) {
      listeners.add(Objects.requireNonNull(listener, "listener must not be null"));
      return this;
    }

    /**
     * Checks the rule between fields, and returns the settings.
     *
     * @throws IllegalArgumentException if no ttl would be accepted: the largest, {@code maxTtl},
     *     must exceed {@code nodeTimeout} plus its own clock drift
     */
    LockSettings build() {
      long largestMillis = maxTtl.toMillis(); // the largest whole-millisecond ttl allowed
      long drift = Validity.driftNanos(largestMillis, clockDriftFactor);
      if (TimeUnit.MILLISECONDS.toNanos(largestMillis) <= timeout.toNanos() + drift) {
        throw new IllegalArgumentException(
            "maxTtl leaves no valid ttl: a ttl must be > nodeTimeout + clock drift ("
                + timeout.toMillis()
                + "ms + "
                + TimeUnit.NANOSECONDS.toMillis(drift)
                + "ms) and <= maxTtl, was "
                + maxTtl
                + "; raise maxTtl or lower nodeTimeout");
      }
      return new LockSettings(this);
    }
  }
}
