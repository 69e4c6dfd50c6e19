package dev.redlock;

import java.time.Duration;
import java.util.Optional;

/**
 * A counting semaphore of leased permits: at most {@link #permits()} leases of it are valid at any
 * time, across every client of the store, under the same faults as the mutex. Made by {@link
 * Redlock#semaphore}; cheap, immutable and thread-safe (it holds no permit itself: each {@link
 * Lease} it returns is one permit).
 *
 * <pre>{@code
 * Semaphore exports = redlock.semaphore("exports", 3); // at most 3 exports at once
 * exports.withPermit(Duration.ofSeconds(30), Duration.ofMinutes(1), permit -> {
 *   permit.checkValid();
 *   return runExport(permit.fencingToken());
 * });
 * }</pre>
 *
 * <p><strong>What a permit is.</strong> Permit {@code i} (0 to {@code permits - 1}) is the mutex of
 * the resource {@link #permitResource(int) name@permit:i}, on the same store and quorum as any
 * other lock of the Redlock. A permit is a lease of one of those resources: it counts only while a
 * quorum holds it, expires with its ttl (a crashed holder gives it back), renews with {@link
 * Lease#keepAlive()} or {@link #withPermit}, is owner-checked on release and extend, goes through
 * the restart guard, and has that resource's fencing token. So "at most {@code permits} at once" is
 * the mutex's "at most one per resource", {@code permits} times over (docs/design.md,
 * "Semaphores"). A {@link Lease} of a permit is the mutex's lease: {@link Lease#resource()} names
 * its permit ({@code exports@permit:2}), and {@link Lease#fencingToken()} orders the holders of
 * that one permit, not of the whole semaphore (docs/fencing.md).
 *
 * <p><strong>Changing the number of permits.</strong> The number is not stored anywhere: each
 * client says it, and takes only permits below it. So, at any instant, the valid permits of one
 * semaphore name number at most the largest {@code permits} of the semaphores they were taken
 * through. Growing (clients move to a larger number) makes the new permits available at once to the
 * clients that use it; clients still on the smaller number keep to the lower permits. Shrinking
 * (clients move to a smaller number) stops permits at or above it from being granted; a lease
 * already on one runs until it is released or expires (a holder that keeps renewing keeps it, up to
 * {@code maxHold}), so the count comes down to the new number once those end. A client that must
 * not start until the smaller number holds can wait for that itself.
 *
 * <p><strong>Cost.</strong> An attempt asks the permits one after the other, from a random one (so
 * that clients do not all ask permit 0 first), until one is won: one round trip while permits are
 * free, and {@code permits} round trips when every one is taken. A refusal that is not contention
 * ends the round only when the nodes that failed, timed out or are quarantined bar a quorum by
 * themselves (the other permits live on the same nodes); a permit blocked by another client's
 * refusals plus a node that is out does not, and the round goes on. With a silent node each refused
 * permit may wait a {@code nodeTimeout} for its roll-back, so a full semaphore's round takes up to
 * {@code permits × nodeTimeout} (hence {@link #MAX_PERMITS}); {@link #acquire} asks no permit past
 * its {@code maxWait} (after its first, which may first wait for its turn: {@link
 * RedlockConfig#maxAttemptsInFlight}). {@link #acquire} then waits as the mutex's {@link
 * Redlock#acquire} does: the threads of one Redlock waiting for one semaphore stand in one line,
 * only the first asks again (after the retry pause), and a permit this Redlock releases wakes it at
 * once.
 *
 * <p><strong>Names.</strong> Names are used exactly as given. A semaphore's name must not contain
 * {@value #PERMIT_MARK} (so two semaphores never share a permit), and a mutex should not be given a
 * permit's name: it would take that permit (never two of the same permit at once, so never more
 * than {@code permits}).
 */
public interface Semaphore {
  /**
   * The most permits one semaphore may have: a full semaphore costs one round trip per permit, and
   * with a silent node up to a {@code nodeTimeout} each (64 × 50 ms at the defaults).
   */
  int MAX_PERMITS = dev.redlock.internal.Names.MAX_PERMITS;

  /** What stands between a semaphore's name and a permit's number in the permit's resource. */
  String PERMIT_MARK = dev.redlock.internal.Names.PERMIT_MARK;

  /** The semaphore's name, as given. */
  String name();

  /** How many permits this client takes from: permits {@code 0} to {@code permits() - 1}. */
  int permits();

  /**
   * The resource whose mutex is permit {@code index}: {@code name() + "@permit:" + index}. What a
   * permit's {@link Lease#resource()}, its events and the nodes' key name; for operators and tests.
   *
   * @throws IllegalArgumentException if {@code index} is not between 0 and {@link #permits()} - 1
   */
  String permitResource(int index);

  /**
   * One round, without sleeping: asks for each permit once, from a random one, until one is won.
   *
   * @param ttl how long the store keeps the permit if it is never released
   * @return the lease of one permit, or empty if every permit is held elsewhere
   * @throws NullPointerException if {@code ttl} is null
   * @throws IllegalArgumentException for a bad ttl, as {@link Redlock#tryAcquire}
   * @throws LockUnavailableException if a permit's attempt failed for another reason than
   *     contention and none was won (the first such failure); its {@link
   *     LockUnavailableException#resource()} is the semaphore's name, its message names the permit
   * @throws RedlockException if interrupted (the interrupt flag is set again; nothing is held)
   * @throws IllegalStateException if its Redlock is closed
   */
  Optional<Lease> tryAcquire(Duration ttl);

  /**
   * Acquires a permit: rounds of {@link #tryAcquire}, waiting in line between them as {@link
   * Redlock#acquire} does, until one is won or {@code maxWait} is spent.
   *
   * @param ttl how long the store keeps the permit if it is never released
   * @param maxWait how long to keep trying; zero means one round
   * @return the lease of one permit
   * @throws LockUnavailableException if no permit was won in time: {@link
   *     LockUnavailableException#resource()} is the semaphore's name, {@link
   *     LockUnavailableException#attempts()} counts rounds, the message and {@link
   *     LockUnavailableException#nodeOutcomes()} are the last permit's attempt
   * @throws InterruptedException if interrupted while waiting; nothing is held
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException for a bad ttl, or a negative {@code maxWait}
   * @throws IllegalStateException if its Redlock is closed
   */
  Lease acquire(Duration ttl, Duration maxWait) throws InterruptedException;

  /**
   * {@link Redlock#withLock} with a permit: acquires one ({@link #acquire}), runs {@code task}
   * while renewing it, and releases it in every case; a lost permit interrupts the task (unless
   * {@link TaskInterruption#NEVER}) and is attached to what it throws.
   *
   * @return what the task returned
   * @throws E what the task threw, unchanged
   * @throws LockUnavailableException if no permit was won within {@code maxWait}; the task did not
   *     run
   * @throws InterruptedException if interrupted while waiting to acquire; the task did not run
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException for a bad ttl or maxWait, or a ttl too short to renew (see
   *     {@link Lease#keepAlive()})
   * @throws IllegalStateException if its Redlock is closed
   */
  <T, E extends Exception> T withPermit(Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException;
}
