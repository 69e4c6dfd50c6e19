package dev.redlock.shedlock;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} on a {@link Redlock}: each lock is a
 * lease on a quorum of Redis nodes, or a row of the SQL store the Redlock was built with; the
 * provider does not care which. It is an {@link ExtensibleLockProvider}, so ShedLock's {@code
 * KeepAliveLockProvider} and {@code LockExtender} work over it.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(Redlock redlock) {       // instead of new RedisLockProvider(...)
 *   return RedlockLockProvider.create(redlock, "shedlock:");
 * }
 * }</pre>
 *
 * <p>What ShedLock's settings mean here:
 *
 * <ul>
 *   <li><b>the lock's name</b> is the Redlock resource, after the name prefix;
 *   <li><b>{@code lockAtMostFor}</b> is the lease's ttl: it must be a whole number of milliseconds,
 *       above {@code nodeTimeout} plus the drift allowance and at most {@code maxTtl} (one minute
 *       by default: raise it on every client of the nodes for longer jobs, or keep the lease alive
 *       with {@code KeepAliveLockProvider});
 *   <li><b>{@code lockAtLeastFor}</b> is kept by holding the lease after {@link SimpleLock#unlock}
 *       and releasing it when that time has passed ({@link RedlockSimpleLock#unlock()}).
 * </ul>
 *
 * <p>Both times are counted on this JVM's monotonic clock from just before the lock is asked for,
 * which is at or after the configuration's {@code lockAtTime}: the lock is held at least as long as
 * ShedLock asks, and never expires before ShedLock's own deadline.
 *
 * <p>{@link #lock} makes one attempt and never waits: busy is an empty result. Nodes that stand in
 * the way (too few answer, or too late) are an exception, not "locked elsewhere": ShedLock passes
 * it to the scheduler, which logs it, and that run is skipped.
 *
 * <p>The job reads its fencing token with {@link CurrentLock#fencingToken()}. Thread-safe; close it
 * (Spring does, for a {@code @Bean}) to stop its release timer.
 */
public final class RedlockLockProvider implements ExtensibleLockProvider, AutoCloseable {
  private final Redlock redlock;
  private final String namePrefix;
  private final DelayedReleases releases = new DelayedReleases();

  private RedlockLockProvider(Redlock redlock, String namePrefix) {
    this.redlock = redlock;
    this.namePrefix = namePrefix;
  }

  /**
   * A provider whose locks are the Redlock resources of the same name.
   *
   * @param redlock the application's Redlock; it stays the application's to close, after this
   *     provider
   * @throws NullPointerException if {@code redlock} is null
   */
  public static RedlockLockProvider create(Redlock redlock) {
    return create(redlock, "");
  }

  /**
   * A provider whose lock named {@code n} is the Redlock resource {@code namePrefix + n}: a prefix
   * keeps the scheduler's locks apart from the application's other resources.
   *
   * @param redlock the application's Redlock; it stays the application's to close, after this
   *     provider
   * @param namePrefix put before every lock name; empty for none
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code namePrefix} is not empty and only whitespace
   */
  public static RedlockLockProvider create(Redlock redlock, String namePrefix) {
    Objects.requireNonNull(redlock, "redlock must not be null");
    Objects.requireNonNull(namePrefix, "namePrefix must not be null");
    if (!namePrefix.isEmpty() && namePrefix.isBlank()) {
      throw new IllegalArgumentException(
          "namePrefix must be empty or hold more than whitespace, was '" + namePrefix + "'");
    }
    return new RedlockLockProvider(redlock, namePrefix);
  }

  /**
   * Makes one attempt to lock {@code lockConfiguration}'s name for its {@code lockAtMostFor}.
   *
   * @return the lock (a {@link RedlockSimpleLock}), or empty if it is held elsewhere (by another
   *     instance, or by this one while its {@code lockAtLeastFor} lasts)
   * @throws NullPointerException if {@code lockConfiguration} is null
   * @throws IllegalArgumentException if the Redlock refuses the resource or the ttl: the message
   *     names the lock, its {@code lockAtMostFor} and the rule
   * @throws LockUnavailableException if too few nodes answered, or too late (not "held elsewhere"):
   *     {@link LockUnavailableException#reason()} and the message say which node answered what
   * @throws dev.redlock.RedlockException if the thread was interrupted (the flag is set again)
   * @throws IllegalStateException if this provider or its Redlock is closed
   */
  @Override
  public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
    Objects.requireNonNull(lockConfiguration, "lockConfiguration must not be null");
    releases.checkOpen();
    String name = lockConfiguration.getName();
    String resource = namePrefix + name;
    Duration lockAtMostFor = lockConfiguration.getLockAtMostFor();
    long start = System.nanoTime();
    Optional<Lease> lease;
    try {
      lease = redlock.tryAcquire(resource, lockAtMostFor);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "cannot lock '"
              + name
              + "' (resource '"
              + resource
              + "', lockAtMostFor "
              + lockAtMostFor
              + " as its ttl): "
              + e.getMessage(),
          e);
    }
    return lease.map(
        l ->
            RedlockSimpleLock.first(
                new Acquisition(name, l, releases),
                start + lockConfiguration.getLockAtLeastFor().toNanos()));
  }

  /**
   * Closes the provider: {@link #lock} throws from now on, and this waits, first until every lock
   * still held is unlocked (its job has ended) or its lease has run out, then until every lock
   * unlocked before its {@code lockAtLeastFor} had passed has been released at its time; both waits
   * are logged at INFO. Then it stops the release timer. So closing never frees a running job's
   * lock nor cuts {@code lockAtLeastFor} short, provided the provider is closed before its Redlock
   * (Spring closes a {@code @Bean} before the beans it depends on): closing the Redlock releases at
   * once every lease nobody keeps alive, as these. Interrupted, it stops waiting and leaves the
   * rest held (the flag is set again). Idempotent.
   */
  @Override
  public void close() {
    releases.close();
  }

  @Override
  public String toString() {
    return "RedlockLockProvider[namePrefix='" + namePrefix + "', " + redlock + "]";
  }
}
