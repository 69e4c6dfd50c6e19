package dev.redlock.spring.integration;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

/**
 * A Spring Integration {@link RenewableLockRegistry} whose locks are {@link Redlock} leases: on a
 * quorum of Redis nodes, or in a SQL table when the {@code Redlock} was built over {@code
 * redlock-jdbc}'s store; the registry does not care which. It stands in for {@code
 * RedisLockRegistry} or {@code JdbcLockRegistry} wherever a {@code LockRegistry} goes ({@code
 * LockRegistryLeaderInitiator}, {@code LockRequestHandlerAdvice}, aggregators, your own code). It
 * does not see their locks, nor they its: switch every instance of an application at once.
 *
 * <pre>{@code
 * @Bean
 * RedlockLockRegistry lockRegistry(Redlock redlock) {
 *   return RedlockLockRegistry.builder(redlock, Duration.ofSeconds(30)).keyPrefix("orders:").build();
 * }
 * }</pre>
 *
 * <p>The lock of {@link #obtain obtain(key)} locks the resource {@code keyPrefix + key}; its
 * semantics are those of Spring's own registries (see {@link RedlockLock}): reentrant per thread,
 * unlocked only by the thread that holds it, and an unlock after the lease was lost throws {@link
 * java.util.ConcurrentModificationException}. Each acquisition holds a lease of its own with a
 * fencing token ({@link RedlockLock#fencingToken()}); two registries, in one JVM or many, exclude
 * each other through the store, never through shared memory.
 *
 * <p>Keys must be {@code String}s, as for {@code RedisLockRegistry} and {@code JdbcLockRegistry}:
 * another type's {@code toString()} may name an object rather than a value ({@code
 * Order@1b6d3586}), which would give each JVM a lock of its own. The registry keeps state only for
 * keys that a thread holds or waits for, so it needs no eviction ({@code ExpirableLockRegistry}).
 *
 * <p>Thread-safe. {@link #close()} waits for the locks held; the {@code Redlock} is closed by its
 * owner.
 */
public final class RedlockLockRegistry
    implements RenewableLockRegistry<RedlockLock>, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RedlockLockRegistry.class);

  private final Redlock redlock;
  private final Duration ttl;
  private final String keyPrefix;

  /** The keys some thread holds or waits for; an entry goes when its last user leaves. */
  private final ConcurrentMap<String, Holds> inUse = new ConcurrentHashMap<>();

  private volatile boolean closing;

  private RedlockLockRegistry(Builder builder) {
    this.redlock = builder.redlock;
    this.ttl = builder.ttl;
    this.keyPrefix = builder.keyPrefix;
  }

  /**
   * Starts a registry over {@code redlock} whose locks take leases of {@code ttl} unless a call
   * names another ({@link RedlockLock#lock(Duration)}, {@link RedlockLock#tryLock(Duration,
   * Duration)}).
   *
   * @param redlock the lock service, over Redis nodes or a SQL store; the registry does not close
   *     it
   * @param ttl how long a lease lasts if it is never unlocked or renewed: more than the {@code
   *     Redlock}'s {@code nodeTimeout} (plus its drift allowance, checked on the first lock) and at
   *     most its {@code maxTtl}
   * @return a builder, for the optional key prefix
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code ttl} is not positive, not more than {@code
   *     nodeTimeout}, or more than {@code maxTtl}
   */
  public static Builder builder(Redlock redlock, Duration ttl) {
    return new Builder(redlock, ttl);
  }

  /**
   * The lock of {@code lockKey}: of the resource {@code keyPrefix + lockKey}. Cheap: it takes
   * nothing until locked, and every lock of one key from this registry is the same lock.
   *
   * @param lockKey a non-blank {@code String}
   * @throws NullPointerException if {@code lockKey} is null
   * @throws IllegalArgumentException if {@code lockKey} is not a {@code String}, or is blank
   */
  @Override
  public RedlockLock obtain(Object lockKey) {
    return new RedlockLock(this, key(lockKey));
  }

  /**
   * Extends the lease the calling thread holds on {@code lockKey} to the registry's ttl from now.
   *
   * @throws IllegalStateException if the calling thread does not hold the lock, or the lease could
   *     not be extended (lost, or too few nodes confirmed in time)
   * @throws NullPointerException if {@code lockKey} is null
   * @throws IllegalArgumentException for a key {@link #obtain} refuses
   * @see RedlockLock#renew(Duration)
   */
  @Override
  public void renewLock(Object lockKey) {
    renewLock(lockKey, ttl);
  }

  /**
   * Extends the lease the calling thread holds on {@code lockKey} to {@code ttl} from now: an
   * owner-checked extend on the nodes that hold it ({@link dev.redlock.Lease#extend}), which never
   * shortens it and never revives a lost one.
   *
   * @throws IllegalStateException if the calling thread does not hold the lock, or the lease could
   *     not be extended (lost, or too few nodes confirmed in time)
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException for a key {@link #obtain} refuses or a ttl the {@code Redlock}
   *     refuses
   */
  @Override
  public void renewLock(Object lockKey, Duration ttl) {
    Objects.requireNonNull(ttl, "ttl must not be null");
    obtain(lockKey).renew(ttl);
  }

  /**
   * Refused: this registry renews no lease on a timer of its own. Renew by hand with {@link
   * #renewLock}, or have the core renew the lease of a held lock: {@code lock.lease().keepAlive()}
   * (renewed until unlocked, lost or {@code maxHold}).
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
    throw new UnsupportedOperationException(
        "RedlockLockRegistry renews no lease on a TaskScheduler: call renewLock(key), or"
            + " lock.lease().keepAlive() to have Redlock renew a held lock until it is unlocked");
  }

  /** The ttl of a lease unless a call names another. */
  public Duration ttl() {
    return ttl;
  }

  /** What every key is prefixed with to make its resource name; empty for none. */
  public String keyPrefix() {
    return keyPrefix;
  }

  @Override
  public String toString() {
    return "RedlockLockRegistry{ttl=" + ttl + ", keyPrefix='" + keyPrefix + "', " + redlock + "}";
  }

  Redlock redlock() {
    return redlock;
  }

  String resource(String key) {
    return keyPrefix + key;
  }

  /** Counts one more user (a thread waiting, or one hold) of {@code key}'s state. */
  Holds enter(String key) {
    return inUse.compute(
        key,
        (k, holds) -> {
          Holds h = holds == null ? new Holds() : holds;
          h.users++;
          return h;
        });
  }

  /** Counts one user less; the state goes when no thread holds or waits for the key. */
  void leave(String key) {
    inUse.computeIfPresent(key, (k, holds) -> --holds.users == 0 ? null : holds);
    if (closing) {
      synchronized (inUse) {
        inUse.notifyAll();
      }
    }
  }

  /**
   * Waits until every lock held when it is called has been unlocked or its lease has run out,
   * however it is renewed meanwhile; logged at INFO while it waits. Spring calls it for a registry
   * {@code @Bean} (its inferred destroy method) before it closes the {@code Redlock} the registry
   * depends on, whose close releases at once every lease nobody keeps alive: so a thread still
   * inside {@code executeLocked} or a locked handler when the application shuts down keeps its lock
   * until it ends. Locks stay usable; the {@code Redlock} is not closed. Interrupted, it stops
   * waiting (the flag is set again). Idempotent.
   */
  @Override
  public void close() {
    closing = true;
    List<Holds> held = List.copyOf(inUse.values());
    long left = longestValidity(held);
    if (left <= 0) {
      return;
    }
    log.info(
        "closing: waiting for {} held lock(s) to be unlocked, {} ms at most unless renewed",
        held.size(),
        TimeUnit.NANOSECONDS.toMillis(left));
    synchronized (inUse) {
      try {
        while ((left = longestValidity(held)) > 0) {
          TimeUnit.NANOSECONDS.timedWait(inUse, left);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The longest validity left of the leases still held among {@code held}; 0 if none. */
  private static long longestValidity(List<Holds> held) {
    long longest = 0;
    for (Holds holds : held) {
      Lease lease = holds.lease;
      if (holds.users > 0 && lease != null) {
        longest = Math.max(longest, lease.remainingValidity().toNanos());
      }
    }
    return longest;
  }

  /** The state of {@code key} if the calling thread holds it, else null. */
  Holds heldByCurrentThread(String key) {
    Holds holds = inUse.get(key);
    return holds != null && holds.local.isHeldByCurrentThread() ? holds : null;
  }

  private static String key(Object lockKey) {
    Objects.requireNonNull(lockKey, "lockKey must not be null");
    if (!(lockKey instanceof String key)) {
      throw new IllegalArgumentException(
          "lockKey must be a String (the resource name after the key prefix), was a "
              + lockKey.getClass().getName()
              + ": '"
              + lockKey
              + "'; pass a String that names the value, e.g. String.valueOf(id)");
    }
    if (key.isBlank()) {
      throw new IllegalArgumentException("lockKey must not be blank, was '" + key + "'");
    }
    return key;
  }

  /** The registry's settings beyond the {@code Redlock} and the ttl. */
  public static final class Builder {
    private final Redlock redlock;
    private final Duration ttl;
    private String keyPrefix = "";

    private Builder(Redlock redlock, Duration ttl) {
      this.redlock = Objects.requireNonNull(redlock, "redlock must not be null");
      Objects.requireNonNull(ttl, "ttl must not be null");
      Duration nodeTimeout = redlock.config().nodeTimeout();
      Duration maxTtl = redlock.config().maxTtl();
      if (ttl.compareTo(nodeTimeout) <= 0) {
        throw new IllegalArgumentException(
            "ttl must be > the Redlock's nodeTimeout (" + nodeTimeout + "), was " + ttl);
      }
      if (ttl.compareTo(maxTtl) > 0) {
        throw new IllegalArgumentException(
            "ttl must be <= the Redlock's maxTtl (" + maxTtl + "), was " + ttl);
      }
      this.ttl = ttl;
    }

    /**
     * Prefixes every key with {@code keyPrefix} to make its resource name ({@code "orders:"} and
     * key {@code "42"} lock {@code "orders:42"}), as {@code RedisLockRegistry}'s registry key does;
     * default none. Registries that must exclude each other use the same prefix.
     *
     * @throws NullPointerException if {@code keyPrefix} is null
     * @throws IllegalArgumentException if it is not empty but blank
     */
    public Builder keyPrefix(String keyPrefix) {
      Objects.requireNonNull(keyPrefix, "keyPrefix must not be null");
      if (!keyPrefix.isEmpty() && keyPrefix.isBlank()) {
        throw new IllegalArgumentException(
            "keyPrefix must be empty or not blank, was '" + keyPrefix + "'");
      }
      this.keyPrefix = keyPrefix;
      return this;
    }

    /** The registry. */
    public RedlockLockRegistry build() {
      return new RedlockLockRegistry(this);
    }
  }
}
