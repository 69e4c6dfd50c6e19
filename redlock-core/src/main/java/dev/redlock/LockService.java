package dev.redlock;

import dev.redlock.internal.Ticker;
import dev.redlock.spi.LeaseStore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A lock service: leases on named resources, whatever store keeps them. {@link Redlock} is the one
 * over a quorum of Redis nodes; {@link #over} puts the same lifecycle over another {@link
 * LeaseStore} (a SQL table, from {@code redlock-jdbc}). Leases mean the same thing everywhere:
 * validity measured on this JVM's monotonic clock from before the store was asked, renewal and the
 * lost-lease signal, fencing tokens that grow.
 *
 * <p>Thread-safe; {@link #close()} releases every lease still held.
 */
public interface LockService extends AutoCloseable {

  /**
   * One attempt, without sleeping.
   *
   * @return the lease, or empty if the lock is held elsewhere
   * @throws LockUnavailableException if the attempt failed for another reason than contention
   * @throws IllegalArgumentException for a blank resource or a bad ttl
   * @throws IllegalStateException if this service is closed
   */
  Optional<Lease> tryAcquire(String resource, Duration ttl);

  /**
   * Acquires the lock, retrying after {@code retryDelay} plus jitter until {@code maxWait} is
   * spent.
   *
   * @throws LockUnavailableException if the lock was not won in time; it says why
   * @throws InterruptedException if interrupted while waiting; nothing is held
   */
  Lease acquire(String resource, Duration ttl, Duration maxWait) throws InterruptedException;

  /**
   * Acquires, runs {@code task} while renewing the lease, and releases it in every case; a lost
   * lease interrupts the task (unless {@link TaskInterruption#NEVER}) and is attached to what it
   * throws.
   */
  <T, E extends Exception> T withLock(
      String resource, Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException;

  /** Releases every lease still held, then closes the store. Idempotent. */
  @Override
  void close();

  /**
   * A lock service over {@code store}, with this library's lease lifecycle.
   *
   * @throws NullPointerException if an argument is null
   */
  static LockService over(LeaseStore<?> store, LockSettings settings) {
    Objects.requireNonNull(store, "store must not be null");
    Objects.requireNonNull(settings, "settings must not be null");
    return LeaseEngine.create(store, settings, Ticker.SYSTEM);
  }
}
