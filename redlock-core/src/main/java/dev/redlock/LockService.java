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
   * One attempt, without sleeping. When the service already has {@link
   * LockSettings#maxAttemptsInFlight} attempts on the store, it first waits its turn (in arrival
   * order, before its attempt starts).
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

  /**
   * {@link #tryAcquire}, without the calling thread waiting: one attempt, run on one of a few
   * library threads (4 per service). The future holds the lease, or empty if the lock is held
   * elsewhere, or fails with what {@link #tryAcquire} throws ({@link LockUnavailableException} and
   * its reason; {@link IllegalStateException} if the service closes first; {@link RedlockException}
   * if 4,096 asynchronous acquisitions are pending already). It is completed on the service's
   * callback threads (where {@code onLost} callbacks and listener events run; 8 per service), never
   * on an attempt or timer thread: chain to it with the {@code *Async} methods and an executor of
   * yours for work that blocks. Completing it yourself (cancel, {@code orTimeout}) interrupts an
   * attempt in flight, which rolls back what it sent; a lease won as it completed is released.
   * Cancel the returned future itself, not one derived from it: if {@code cancel} returns false,
   * the future holds a lease you must release.
   *
   * @throws IllegalArgumentException for a blank resource or a bad ttl (at once, not in the future)
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if this service is closed
   */
  java.util.concurrent.CompletableFuture<Optional<Lease>> tryAcquireAsync(
      String resource, Duration ttl);

  /**
   * {@link #acquire}, without a thread waiting between attempts: each attempt runs on a library
   * thread (as in {@link #tryAcquireAsync}), and the lease timers start the next one after {@code
   * retryDelay} plus jitter. The future holds the lease, or fails with {@link
   * LockUnavailableException} once {@code maxWait} is spent (and as {@link #tryAcquireAsync} says).
   * Completing it yourself (cancel, {@code orTimeout}, {@code complete}) stops the retries and
   * interrupts an attempt in flight (rolled back, nothing held, within about {@code nodeTimeout});
   * a lease won as it completed is released. Same events and metrics as {@link #acquire}.
   *
   * @throws IllegalArgumentException for a blank resource, a bad ttl or a negative maxWait (at
   *     once)
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if this service is closed
   */
  java.util.concurrent.CompletableFuture<Lease> acquireAsync(
      String resource, Duration ttl, Duration maxWait);

  /**
   * Acquires asynchronously ({@link #acquireAsync}), then calls {@code task} with the lease, renews
   * it until the stage {@code task} returns completes, and releases it in every case (the task
   * throws, returns null, its stage fails, or it succeeds). The future holds the stage's value; it
   * fails with the stage's error (the lease's loss, if it was lost, attached as suppressed), or, if
   * the stage succeeded while the lease was lost or released by {@link #close}, with {@link
   * LeaseLostException} or {@link IllegalStateException}: the work was not done under the lock
   * throughout. When the lease is lost and {@code taskInterruption} is {@code ON_LEASE_LOSS}, the
   * stage is cancelled (as {@link #withLock} interrupts its task). {@code task} is called, and the
   * lease released, on the service's callback threads: return a stage rather than block there.
   * Completing the future before the lock is won stops the acquisition; after, nothing stops the
   * task but its stage (and {@code maxHold}, the bound on every lease's renewal).
   *
   * @throws IllegalArgumentException for a bad argument, or a ttl too short to be renewed (at once)
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if this service is closed
   */
  <T> java.util.concurrent.CompletableFuture<T> withLockAsync(
      String resource,
      Duration ttl,
      Duration maxWait,
      java.util.function.Function<? super Lease, ? extends java.util.concurrent.CompletionStage<T>>
          task);

  /**
   * The most resources one multi-resource lease may lock ({@link #tryAcquireAll}): each node runs
   * one script over all of them while every other request waits, so the set is kept small.
   */
  int MAX_RESOURCES = 64;

  /**
   * One attempt, without sleeping, to lock every one of {@code resources} at once: all of them or
   * none. The lease then holds the whole set until it is released, extended or lost as one; its
   * {@link Lease#fencingToken(String)} gives the token of each resource. A single-resource lease
   * and a multi-resource lease of overlapping resources exclude each other, and two clients asking
   * for overlapping sets, in any order, never wait for each other: one wins or neither does (the
   * latter is then {@code Optional.empty()}, as for any contention). A set of one name is {@link
   * #tryAcquire} of it. Names are used exactly as given, as everywhere in this library (no case
   * folding, no trimming).
   *
   * @param resources the names to lock, 1 to {@link #MAX_RESOURCES} of them
   * @param ttl how long the store keeps every one of them if the lease is never released
   * @return the lease, or empty if any of the resources is held elsewhere (then none is taken)
   * @throws NullPointerException if {@code resources} or {@code ttl} is null, or {@code resources}
   *     contains null
   * @throws IllegalArgumentException if {@code resources} is empty, holds more than {@link
   *     #MAX_RESOURCES} names, holds a blank name or one the store refuses (as {@link #tryAcquire}
   *     would), or holds a name twice (a set whose equality is not {@link String#equals}); or for a
   *     bad ttl, as {@link #tryAcquire}
   * @throws LockUnavailableException if the attempt failed for another reason than contention
   * @throws UnsupportedOperationException if the store cannot lock several resources at once
   *     ({@link LeaseStore#takeAll}); both of this library's stores can
   * @throws IllegalStateException if this service is closed
   */
  Optional<Lease> tryAcquireAll(java.util.Set<String> resources, Duration ttl);

  /**
   * {@link #tryAcquireAll}, retrying after {@code retryDelay} plus jitter until {@code maxWait} is
   * spent, as {@link #acquire}.
   *
   * @param resources the names to lock, 1 to {@link #MAX_RESOURCES} of them
   * @param ttl how long the store keeps every one of them if the lease is never released
   * @param maxWait how long to keep trying; zero means one attempt
   * @return the lease of every one of {@code resources}
   * @throws LockUnavailableException if the set was not won in time; it says why
   * @throws InterruptedException if interrupted while waiting; nothing is held
   * @throws NullPointerException as {@link #tryAcquireAll}, or if {@code maxWait} is null
   * @throws IllegalArgumentException as {@link #tryAcquireAll}, or for a negative {@code maxWait}
   * @throws UnsupportedOperationException as {@link #tryAcquireAll}
   * @throws IllegalStateException if this service is closed
   */
  Lease acquireAll(java.util.Set<String> resources, Duration ttl, Duration maxWait)
      throws InterruptedException;

  /**
   * {@link #withLock} over every one of {@code resources} at once: acquires them all ({@link
   * #acquireAll}), runs {@code task} while renewing the whole set, and releases it in every case.
   *
   * @throws E what the task threw, unchanged
   * @throws LockUnavailableException if the set was not won within {@code maxWait}; the task did
   *     not run
   * @throws InterruptedException if interrupted while waiting to acquire; the task did not run
   * @throws NullPointerException as {@link #acquireAll}, or if {@code task} is null
   * @throws IllegalArgumentException as {@link #acquireAll}, or for a ttl too short to renew
   * @throws UnsupportedOperationException as {@link #tryAcquireAll}
   * @throws IllegalStateException if this service is closed
   */
  <T, E extends Exception> T withLockAll(
      java.util.Set<String> resources, Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException;

  /**
   * A counting semaphore over this service: at most {@code permits} of its leases valid at once,
   * across every client of the store. Each permit is a lease of this service on one of the
   * resources {@code name@permit:0} to {@code name@permit:(permits - 1)}, with the mutex's rules
   * (quorum, ttl, renewal, owner check, restart guard, fencing token per permit, events, metrics);
   * {@link Semaphore} says what holds when clients use different numbers of permits for one name.
   * Cheap: it takes nothing and may be made per use.
   *
   * @param name the semaphore's name; not blank, without {@value Semaphore#PERMIT_MARK}
   * @param permits how many permits, 1 to {@link Semaphore#MAX_PERMITS}
   * @return the semaphore, whose {@code acquire} returns one permit's {@link Lease}
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException for a blank name, a name holding {@value
   *     Semaphore#PERMIT_MARK}, a number of permits out of range, or a name whose permits'
   *     resources the store refuses (as {@link #tryAcquire} would)
   * @throws IllegalStateException if this service is closed
   */
  Semaphore semaphore(String name, int permits);

  /**
   * The read-write lock named {@code name}: many readers at once or one writer ({@link
   * ReadWriteLock}), its leases taken from this service's store. Holds nothing by itself: make it
   * once and keep it, or make it each time, alike. Its names are apart from plain resources', so
   * {@code readWriteLock("a")} and {@code tryAcquire("a", ttl)} never exclude each other.
   *
   * @param name the lock's name: not blank, and one the store accepts as a resource name
   * @return the lock
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is blank or the store refuses it
   * @throws UnsupportedOperationException if the store has no read-write locks ({@link
   *     LeaseStore#hasReadWriteLocks}); the message names the store. Both of this library's stores
   *     have them
   * @throws IllegalStateException if this service is closed
   */
  ReadWriteLock readWriteLock(String name);

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
