package dev.redlock.spring.integration;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.LockUnavailableException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.DistributedLock;

/**
 * The lock of one key of a {@link RedlockLockRegistry}: a {@link DistributedLock} held as a {@link
 * Lease} of the resource {@code keyPrefix + key}, with the semantics of Spring's {@code
 * RedisLockRegistry} and {@code JdbcLockRegistry}:
 *
 * <ul>
 *   <li><b>Reentrant per thread.</b> The registry's threads take turns locally; the thread that
 *       holds the lock may lock it again, each lock counted. A reentrant lock extends the lease to
 *       its ttl from now (as Spring's registries refresh the expiry, which {@code
 *       LockRegistryLeaderInitiator}'s heartbeat relies on): a reentrant {@code tryLock} returns
 *       false if the nodes did not confirm the extend within its wait (the outer hold stays, with
 *       the validity it had). If the lease was lost meanwhile, a reentrant lock takes a new one
 *       (with a new fencing token, not kept alive whatever the lost one was: call {@code
 *       lease().keepAlive()} again), and the last unlock reports the gap. Only the last unlock
 *       releases the lease.
 *   <li><b>Owned by a thread.</b> {@link #unlock()} by a thread that does not hold it throws {@link
 *       IllegalStateException}.
 *   <li><b>A lost lease is reported.</b> If the lease expired or was lost before the last unlock,
 *       that unlock releases what is left and throws {@link ConcurrentModificationException}, as
 *       Spring's registries do for an expired lock: another holder may have run meanwhile.
 *   <li><b>Busy is not broken.</b> {@code tryLock} returns false when the lock is held elsewhere
 *       for the whole wait; it throws {@link CannotAcquireLockException} (the {@link
 *       LockUnavailableException} with each node's answer as its cause) when the nodes, not a
 *       competitor, stood in the way. {@link #lock()} and {@link #lockInterruptibly()} wait until
 *       the lock is won, through both, as {@link dev.redlock.Redlock#acquire} with an unbounded
 *       wait does.
 *   <li>No {@link Condition}s.
 * </ul>
 *
 * <p>Each acquisition's lease has its own fencing token ({@link #fencingToken()}): pass it to the
 * protected resource, which refuses a token older than one it has seen. The lock does not renew its
 * lease on its own: renew with {@link RedlockLockRegistry#renewLock}, or call {@code
 * lease().keepAlive()} to have the core renew it until the last unlock.
 */
public final class RedlockLock implements DistributedLock {
  private final RedlockLockRegistry registry;
  private final String key;
  private final String resource;

  RedlockLock(RedlockLockRegistry registry, String key) {
    this.registry = registry;
    this.key = key;
    this.resource = registry.resource(key);
  }

  /**
   * Locks with the registry's ttl, waiting as long as it takes; not interruptible (an interrupt is
   * kept for the caller to see).
   *
   * @throws IllegalArgumentException if the Redlock refuses the resource or the ttl
   * @throws IllegalStateException if the Redlock is closed
   */
  @Override
  public void lock() {
    lock(registry.ttl());
  }

  /**
   * Locks with a lease of {@code ttl}, waiting as long as it takes; not interruptible (an interrupt
   * is kept for the caller to see).
   *
   * @throws NullPointerException if {@code ttl} is null
   * @throws IllegalArgumentException if the Redlock refuses the resource or the ttl
   * @throws IllegalStateException if the Redlock is closed
   */
  @Override
  public void lock(Duration ttl) {
    try {
      acquire(Wait.forever(false), ttl);
    } catch (InterruptedException e) {
      // An uninterruptible wait keeps interrupts for later and never throws this.
      throw new IllegalStateException("uninterruptible lock of '" + resource + "' interrupted", e);
    }
  }

  /**
   * Locks with the registry's ttl, waiting as long as it takes unless interrupted.
   *
   * @throws InterruptedException if the thread is interrupted before or while waiting; nothing is
   *     then held for this call
   * @throws IllegalArgumentException if the Redlock refuses the resource or the ttl
   * @throws IllegalStateException if the Redlock is closed
   */
  @Override
  public void lockInterruptibly() throws InterruptedException {
    acquire(Wait.forever(true), registry.ttl());
  }

  /**
   * One attempt with the registry's ttl, without waiting for the nodes to change their answer.
   *
   * @return true if the calling thread now holds the lock; false if it is held elsewhere (or by
   *     another thread of this registry), or the thread was interrupted (the interrupt is kept)
   * @throws CannotAcquireLockException if too few nodes answered in time
   */
  @Override
  public boolean tryLock() {
    try {
      return acquire(Wait.upTo(0), registry.ttl());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Tries to lock with the registry's ttl, for at most {@code time} (no wait if it is not
   * positive), plus at most one attempt in flight when it runs out.
   *
   * @return true if the calling thread now holds the lock; false if it was held elsewhere for the
   *     whole wait
   * @throws InterruptedException if interrupted; nothing is then held for this call
   * @throws CannotAcquireLockException if the last attempt failed because too few nodes answered in
   *     time, not because the lock was held
   * @throws NullPointerException if {@code unit} is null
   */
  @Override
  public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
    Objects.requireNonNull(unit, "unit must not be null");
    return acquire(Wait.upTo(unit.toNanos(time)), registry.ttl());
  }

  /**
   * Tries to lock with a lease of {@code ttl}, for at most {@code waitTime}, as {@link
   * #tryLock(long, TimeUnit)} does.
   *
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if the Redlock refuses the resource or the ttl
   */
  @Override
  public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
    Objects.requireNonNull(waitTime, "waitTime must not be null");
    long nanos;
    try {
      nanos = waitTime.toNanos();
    } catch (ArithmeticException e) {
      nanos = Long.MAX_VALUE; // beyond what a long holds: no limit
    }
    return acquire(Wait.upTo(nanos), ttl);
  }

  /**
   * Counts one hold of the calling thread down; the last releases the lease on the nodes.
   *
   * @throws IllegalStateException if the calling thread does not hold this lock
   * @throws ConcurrentModificationException at the last unlock, if the lease expired or was lost
   *     during the hold: the lock is released all the same, and what ran under it may have
   *     overlapped another holder
   */
  @Override
  public void unlock() {
    Holds holds = heldOrThrow("unlock");
    try {
      if (holds.local.getHoldCount() == 1) {
        end(holds);
      }
    } finally {
      holds.local.unlock();
      registry.leave(key);
    }
  }

  /**
   * Refused: a lock held on remote nodes has no conditions.
   *
   * @throws UnsupportedOperationException always
   */
  @Override
  public Condition newCondition() {
    throw new UnsupportedOperationException("Conditions are not supported");
  }

  /**
   * The lease the calling thread holds: its fencing token, validity, {@code checkValid()} before a
   * side effect, {@code onLost} and {@code keepAlive()}. Do not release it yourself: {@link
   * #unlock()} does.
   *
   * @throws IllegalStateException if the calling thread does not hold this lock
   */
  public Lease lease() {
    return heldOrThrow("read the lease of").lease;
  }

  /**
   * The fencing token of the lease the calling thread holds: larger than that of every earlier
   * grant of this resource, by any client of the store.
   *
   * @throws IllegalStateException if the calling thread does not hold this lock
   */
  public long fencingToken() {
    return lease().fencingToken();
  }

  /** Whether the calling thread holds this lock (its lease may have been lost since). */
  public boolean isHeldByCurrentThread() {
    return registry.heldByCurrentThread(key) != null;
  }

  /** The resource this lock's leases are of: the registry's key prefix and the key. */
  public String resource() {
    return resource;
  }

  /** Extends the calling thread's lease to {@code ttl} from now; see the registry's renewLock. */
  void renew(Duration ttl) {
    Lease lease = heldOrThrow("renew").lease;
    if (!lease.extend(ttl)) {
      throw new IllegalStateException(
          "Could not renew the lock on '"
              + resource
              + "': "
              + (lease.isValid()
                  ? "too few nodes confirmed the extend in time; the lease stays valid for "
                      + lease.remainingValidity()
                  : "its lease was lost"));
    }
  }

  /** Two locks are equal if they are of the same key of the same registry. */
  @Override
  public boolean equals(Object other) {
    return other instanceof RedlockLock lock && lock.registry == registry && lock.key.equals(key);
  }

  @Override
  public int hashCode() {
    return System.identityHashCode(registry) * 31 + key.hashCode();
  }

  @Override
  public String toString() {
    return "RedlockLock{resource='" + resource + "'}";
  }

  private Holds heldOrThrow(String what) {
    Holds holds = registry.heldByCurrentThread(key);
    if (holds == null) {
      throw new IllegalStateException(
          "Cannot "
              + what
              + " the lock on '"
              + resource
              + "': the current thread ("
              + Thread.currentThread().getName()
              + ") does not hold it");
    }
    return holds;
  }

  /** Takes a local turn, then the lease (or, reentrant, extends it); undoes both on failure. */
  private boolean acquire(Wait wait, Duration ttl) throws InterruptedException {
    Objects.requireNonNull(ttl, "ttl must not be null");
    Holds holds = registry.enter(key);
    boolean held = false;
    try {
      if (!lockLocally(holds.local, wait)) {
        return false;
      }
      try {
        held = holds.local.getHoldCount() == 1 ? take(holds, wait, ttl) : reenter(holds, wait, ttl);
      } finally {
        if (!held) {
          holds.local.unlock();
        }
      }
      return held;
    } finally {
      if (!held) {
        registry.leave(key);
      }
      wait.restoreInterrupt();
    }
  }

  private static boolean lockLocally(ReentrantLock local, Wait wait) throws InterruptedException {
    if (wait.bounded) {
      return local.tryLock(wait.nanosLeft(), TimeUnit.NANOSECONDS);
    }
    if (wait.interruptible) {
      local.lockInterruptibly();
    } else {
      local.lock();
    }
    return true;
  }

  private boolean take(Holds holds, Wait wait, Duration ttl) throws InterruptedException {
    Lease lease = leaseFromStore(wait, ttl);
    if (lease == null) {
      return false;
    }
    holds.lease = lease;
    holds.broken = false;
    return true;
  }

  /**
   * A reentrant lock: extends the lease to {@code ttl}, retrying while it is valid and the wait
   * lasts; a lease lost meanwhile is replaced by a new one, and the hold marked broken.
   */
  private boolean reenter(Holds holds, Wait wait, Duration ttl) throws InterruptedException {
    while (true) {
      wait.checkInterrupt();
      Lease lease = holds.lease;
      // Owner-checked; never revives a lost lease. A lease released by an earlier reentry that
      // could not replace it is not valid: this one asks the store for a new lease.
      if (lease.isValid() && lease.extend(ttl)) {
        return true;
      }
      if (!lease.isValid()) {
        break;
      }
      if (wait.over()) {
        return false; // still held by the outer lock, but not confirmed for ttl more
      }
      wait.pause(registry.redlock().config().retryDelay());
    }
    holds.broken = true; // even if no new lease is won: the outer hold ran past its lease
    holds.lease.release(); // what the lost lease may still hold, owner-checked
    Lease fresh = leaseFromStore(wait, ttl);
    if (fresh == null) {
      return false;
    }
    holds.lease = fresh;
    return true;
  }

  /** A lease, or null if the lock was held elsewhere for the whole of a bounded wait. */
  private Lease leaseFromStore(Wait wait, Duration ttl) throws InterruptedException {
    while (true) {
      wait.checkInterrupt();
      try {
        return registry.redlock().acquire(resource, ttl, wait.left());
      } catch (InterruptedException e) {
        wait.interrupted(e); // nothing is held; an uninterruptible wait tries again
      } catch (LockUnavailableException e) {
        if (wait.bounded && e.reason() == LockUnavailableException.Reason.HELD_ELSEWHERE) {
          return null;
        }
        throw new CannotAcquireLockException(
            "Could not lock '" + resource + "': " + e.getMessage(), e);
      }
    }
  }

  /** The last unlock: releases the lease, and reports it if it ended before. */
  private void end(Holds holds) {
    Lease lease = holds.lease;
    boolean broken = holds.broken;
    holds.lease = null;
    holds.broken = false;
    RuntimeException lost = null;
    try {
      lease.checkValid();
    } catch (LeaseLostException | IllegalStateException e) { // lost, expired, or closed
      lost = e;
    }
    lease.release(); // owner-checked: never deletes the key of whoever holds the lock now
    if (lost != null || broken) {
      throw new ConcurrentModificationException(
          "The lease on '"
              + resource
              + "' ended before unlock"
              + (lost != null
                  ? " (" + lost.getMessage() + ")"
                  : ", and a reentrant lock took another")
              + ": another holder may have run meanwhile, so the integrity of data protected by"
              + " this lock may have been compromised",
          lost);
    }
  }

  /** How long an acquisition may wait, and what it does with an interrupt. */
  private static final class Wait {
    /** Centuries: no limit, as for the core's {@code acquire}. */
    private static final long UNBOUNDED_NANOS = Long.MAX_VALUE / 4;

    final boolean bounded;
    final boolean interruptible;
    private final long deadline;
    private boolean interrupted;

    private Wait(boolean bounded, boolean interruptible, long nanos) {
      this.bounded = bounded;
      this.interruptible = interruptible;
      this.deadline = bounded ? System.nanoTime() + nanos : 0;
    }

    static Wait forever(boolean interruptible) {
      return new Wait(false, interruptible, 0);
    }

    /** At most {@code nanos} (none if not positive), interruptible. */
    static Wait upTo(long nanos) {
      return nanos > UNBOUNDED_NANOS ? forever(true) : new Wait(true, true, Math.max(0, nanos));
    }

    long nanosLeft() {
      return bounded ? Math.max(0, deadline - System.nanoTime()) : Long.MAX_VALUE;
    }

    Duration left() {
      return bounded ? Duration.ofNanos(nanosLeft()) : ChronoUnit.FOREVER.getDuration();
    }

    boolean over() {
      return bounded && deadline - System.nanoTime() <= 0;
    }

    /** Throws if the thread was interrupted and this wait is interruptible; else notes it. */
    void checkInterrupt() throws InterruptedException {
      if (Thread.interrupted()) {
        interrupted(new InterruptedException());
      }
    }

    void interrupted(InterruptedException e) throws InterruptedException {
      if (interruptible) {
        throw e;
      }
      interrupted = true;
    }

    void pause(Duration delay) throws InterruptedException {
      try {
        TimeUnit.NANOSECONDS.sleep(Math.min(delay.toNanos(), nanosLeft()));
      } catch (InterruptedException e) {
        interrupted(e);
      }
    }

    /** Sets the interrupt an uninterruptible wait kept back. */
    void restoreInterrupt() {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
