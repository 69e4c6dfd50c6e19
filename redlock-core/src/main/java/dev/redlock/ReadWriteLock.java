package dev.redlock;

import java.time.Duration;
import java.util.Optional;

/**
 * A read-write lock of one name: many readers at once, or one writer alone. Made by {@link
 * Redlock#readWriteLock}; its two sides hand out the same {@link Lease}s as a plain lock (validity,
 * {@code isValid}/{@code checkValid}, {@code onLost}, renewal, events, metrics, fencing tokens),
 * taken from the same store with the same rules.
 *
 * <pre>{@code
 * ReadWriteLock prices = redlock.readWriteLock("prices");
 * try (Lease read = prices.readLock().acquire(Duration.ofSeconds(10), Duration.ofSeconds(5))) {
 *   quote(read.fencingToken());
 * }
 * prices.writeLock().withLock(ttl, maxWait, write -> reprice(write.fencingToken()));
 * }</pre>
 *
 * <p>A write lease excludes every other lease of the lock; read leases exclude only write leases.
 * Writers first: a writer refused in {@code acquire} or {@code withLock} keeps new readers out
 * until its next attempt, so readers cannot starve it (writers can starve readers). Readers and
 * writers draw from one fencing counter: a write lease's token is larger than that of every lease
 * of the lock that ended before it began, a read lease's than that of every write lease that did
 * (readers are not ordered among themselves). Not reentrant, no upgrade: a read lease holder asking
 * for the write side waits for itself. Its name is apart from plain resource names (docs/design.md,
 * "Read-write locks").
 */
public interface ReadWriteLock {

  /** The lock's name, as given to {@link Redlock#readWriteLock}; every lease's resource. */
  String name();

  /** The read side: leases shared with other readers, excluded by a writer. */
  Side readLock();

  /** The write side: a lease that excludes every reader and every other writer. */
  Side writeLock();

  /** One side of a {@link ReadWriteLock}: its leases are taken like a plain lock's. */
  interface Side {
    /**
     * One attempt, without sleeping.
     *
     * @param ttl how long the store keeps this lease if it is never released
     * @return the lease, or empty if the other side (or, for a writer, another writer) holds the
     *     lock, or, for a reader, a writer waits for it
     * @throws NullPointerException if {@code ttl} is null
     * @throws IllegalArgumentException for a bad ttl, as {@link Redlock#tryAcquire}
     * @throws LockUnavailableException if the attempt failed for another reason than contention
     * @throws RedlockException if the thread was interrupted (the interrupt flag is set again)
     * @throws IllegalStateException if its Redlock is closed
     */
    Optional<Lease> tryAcquire(Duration ttl);

    /**
     * Acquires this side, retrying after {@code retryDelay} plus jitter until {@code maxWait} is
     * spent, as {@link Redlock#acquire}.
     *
     * @param ttl how long the store keeps this lease if it is never released
     * @param maxWait how long to keep trying; zero means one attempt
     * @return the lease
     * @throws LockUnavailableException if the lock was not won in time; it says why
     * @throws InterruptedException if interrupted while waiting; nothing is held
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException for a bad ttl or a negative {@code maxWait}
     * @throws IllegalStateException if its Redlock is closed
     */
    Lease acquire(Duration ttl, Duration maxWait) throws InterruptedException;

    /**
     * Acquires this side ({@link #acquire}), runs {@code task} while renewing the lease, and
     * releases it in every case, as {@link Redlock#withLock}.
     *
     * @param ttl the lease's time to live, renewed every {@code ttl × renewalFraction}
     * @param maxWait how long to keep trying to acquire
     * @param task the work; may throw a checked exception
     * @param <T> what the task returns
     * @param <E> what the task may throw
     * @return what the task returned
     * @throws E what the task threw, unchanged
     * @throws LockUnavailableException if not won within {@code maxWait}; the task did not run
     * @throws InterruptedException if interrupted while waiting to acquire; the task did not run
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException for a bad ttl, a ttl too short to renew, or a negative
     *     {@code maxWait}
     * @throws IllegalStateException if its Redlock is closed
     */
    <T, E extends Exception> T withLock(Duration ttl, Duration maxWait, LeaseTask<T, E> task)
        throws E, InterruptedException;
  }
}
