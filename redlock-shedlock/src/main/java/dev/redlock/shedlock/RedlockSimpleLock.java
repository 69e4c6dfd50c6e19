package dev.redlock.shedlock;

import dev.redlock.LeaseLostException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A lock from {@link RedlockLockProvider}: a ShedLock {@link SimpleLock} over a Redlock lease, with
 * the lease's {@link #fencingToken()} and a {@link #checkValid()} to call right before each side
 * effect. Inside a job, {@link CurrentLock} finds it.
 *
 * <p>As ShedLock's contract says, a lock is used once: after {@link #unlock()} or {@link #extend}
 * (whatever it returned), {@code unlock}, {@code extend} and {@code checkValid} throw {@link
 * IllegalStateException}; an extend's new lock carries on. Thread-safe.
 */
public final class RedlockSimpleLock implements SimpleLock {
  private final Acquisition acquisition;

  /** When {@code lockAtLeastFor} ends, on {@link System#nanoTime()}'s clock. */
  private final long keepUntilNanos;

  private boolean used; // guarded by this

  private RedlockSimpleLock(Acquisition acquisition, long keepUntilNanos) {
    this.acquisition = acquisition;
    this.keepUntilNanos = keepUntilNanos;
  }

  /** The first lock of a lease just won, made current on the calling thread. */
  static RedlockSimpleLock first(Acquisition acquisition, long keepUntilNanos) {
    RedlockSimpleLock lock = new RedlockSimpleLock(acquisition, keepUntilNanos);
    acquisition.moveTo(lock);
    CurrentLock.entered(acquisition);
    acquisition.releases.held(acquisition);
    return lock;
  }

  /** The ShedLock lock name, without the provider's name prefix. */
  public String name() {
    return acquisition.name;
  }

  /** The Redlock resource: the provider's name prefix, then {@link #name()}. */
  public String resource() {
    return acquisition.lease.resource();
  }

  /**
   * The lease's fencing token: greater than every token issued earlier for this resource, by any
   * client. Pass it to the resource the job writes, and have it refuse a token smaller than one it
   * has seen. The same for the locks an extend makes (they hold the same lease).
   */
  public long fencingToken() {
    return acquisition.lease.fencingToken();
  }

  /**
   * Throws unless this lock is still held: call it right before each side effect. A lease that
   * nothing extends ends when {@code lockAtMostFor} runs out; another instance may then hold it.
   *
   * @throws LeaseLostException if the lease ran out or was lost
   * @throws IllegalStateException if this lock was unlocked or extended
   */
  public void checkValid() {
    synchronized (this) {
      checkUnused();
    }
    acquisition.lease.checkValid();
  }

  /**
   * Unlocks, keeping ShedLock's {@code lockAtLeastFor}: if it has not passed yet, the lease stays
   * held and is released when it has, by the provider's one timer thread; else it is released now.
   * Either release is owner-checked on every node, and never throws for nodes that do not answer
   * (their keys expire with the lease's ttl).
   *
   * <p>Why not shorten the lease instead, as ShedLock's Redis provider does with {@code SET ... XX
   * PX}: a Redlock extend never shortens a key (the fencing argument counts on a key living its
   * full ttl), so the lease is kept whole and released on time. The price: if this JVM stops before
   * that time, the lock is held until {@code lockAtMostFor} runs out; closing the provider waits
   * for that time ({@link RedlockLockProvider#close()}); closing the Redlock releases it at once.
   *
   * @throws IllegalStateException if this lock was already unlocked or extended
   */
  @Override
  public void unlock() {
    synchronized (this) {
      checkUnused();
      used = true;
    }
    // The release is on the timer before the provider's close() sees this lock end.
    acquisition.releases.releaseAt(acquisition.lease, keepUntilNanos);
    acquisition.moveTo(null);
  }

  /**
   * Extends the lease so that it is held at least {@code lockAtMostFor} from now, owner-checked on
   * the nodes, and returns the lock to use from now on; this one is then used up, whatever the
   * result. The new lock's {@code lockAtLeastFor} counts from now.
   *
   * <p>An extend never shortens the lease: a {@code lockAtMostFor} shorter than what the lease has
   * left keeps it as it is.
   *
   * @param lockAtMostFor the lease's new ttl, from now
   * @param lockAtLeastFor how long the new lock stays held, from now, however soon it is unlocked
   * @return the new lock, or empty if the lease could not be extended (it ran out, was lost, or too
   *     few nodes confirmed it in time); an empty result leaves the lease to run out at its ttl
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code lockAtLeastFor} is negative or longer than {@code
   *     lockAtMostFor}, or the Redlock refuses {@code lockAtMostFor} as a ttl; this lock is then
   *     still usable
   * @throws IllegalStateException if this lock was already unlocked or extended
   */
  @Override
  public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
    Objects.requireNonNull(lockAtMostFor, "lockAtMostFor must not be null");
    Objects.requireNonNull(lockAtLeastFor, "lockAtLeastFor must not be null");
    if (lockAtLeastFor.isNegative() || lockAtLeastFor.compareTo(lockAtMostFor) > 0) {
      throw new IllegalArgumentException(
          "lockAtLeastFor must be >= 0 and <= lockAtMostFor ("
              + lockAtMostFor
              + "), was "
              + lockAtLeastFor);
    }
    long start = System.nanoTime();
    synchronized (this) {
      checkUnused();
      boolean extended;
      try {
        extended = acquisition.lease.isValid() && acquisition.lease.extend(lockAtMostFor);
      } catch (IllegalArgumentException e) { // checked before anything is sent: still usable
        throw new IllegalArgumentException(
            "cannot extend '"
                + acquisition.name
                + "' with lockAtMostFor "
                + lockAtMostFor
                + " as its ttl: "
                + e.getMessage(),
            e);
      }
      used = true;
      if (!extended) {
        acquisition.moveTo(null);
        return Optional.empty();
      }
      RedlockSimpleLock next = new RedlockSimpleLock(acquisition, start + lockAtLeastFor.toNanos());
      acquisition.moveTo(next);
      return Optional.of(next);
    }
  }

  private void checkUnused() {
    if (used) {
      throw new IllegalStateException(
          "lock '" + acquisition.name + "' was already unlocked or extended: use it only once");
    }
  }

  @Override
  public String toString() {
    return "RedlockSimpleLock[" + acquisition.name + ", fencing token " + fencingToken() + "]";
  }
}
