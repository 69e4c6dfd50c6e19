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
 * <p>Permit {@code i} (0 to {@code permits - 1}) is the mutex of the resource {@link
 * #permitResource(int) name@permit:i}, with every rule of a mutex (quorum, ttl, renewal, restart
 * guard, fencing token per permit). The number of permits is not stored: each client takes only
 * permits below its own number, so after a change the count comes down to the new number once the
 * leases above it end. An attempt asks the permits one after the other from a random one, so a full
 * semaphore costs {@code permits} round trips (docs/design.md, "Semaphores"). A semaphore's name
 * must not contain {@value #PERMIT_MARK}.
 */
public interface Semaphore {
  /** The most permits one semaphore may have: a full one costs a round trip per permit. */
  int MAX_PERMITS = dev.redlock.internal.Names.MAX_PERMITS;

  /** What stands between a semaphore's name and a permit's number in the permit's resource. */
  String PERMIT_MARK = dev.redlock.internal.Names.PERMIT_MARK;

  /** The semaphore's name, as given. */
  String name();

  /** How many permits this client takes from: permits {@code 0} to {@code permits() - 1}. */
  int permits();

  /**
   * The resource whose mutex is permit {@code index}: {@code name() + "@permit:" + index}.
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
   * while renewing it, and releases it in every case.
   *
   * @return what the task returned
   * @throws E what the task threw, unchanged
   * @throws LockUnavailableException if no permit was won in time; the task did not run
   * @throws InterruptedException if interrupted while waiting to acquire; the task did not run
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException for a bad ttl or maxWait, or a ttl too short to renew (see
   *     {@link Lease#keepAlive()})
   * @throws IllegalStateException if its Redlock is closed
   */
  <T, E extends Exception> T withPermit(Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException;
}
