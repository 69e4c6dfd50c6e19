package dev.redlock.shedlock;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.Optional;

/**
 * The {@link RedlockSimpleLock} of the job running on this thread: inside a {@code @SchedulerLock}
 * method, a {@code LockingTaskExecutor.executeWithLock} task, or anywhere between a {@link
 * RedlockLockProvider#lock} and its {@code unlock} on one thread.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * @SchedulerLock(name = "settlement", lockAtMostFor = "50s", lockAtLeastFor = "30s")
 * void settle() {
 *   ledger.settle(batch, CurrentLock.fencingToken());   // the ledger refuses older tokens
 * }
 * }</pre>
 *
 * <p>ShedLock keeps its own thread-local stack of locks ({@code LockExtender}) but does not let
 * anyone read it; this is the provider's own, filled by {@link RedlockLockProvider#lock} on the
 * calling thread (ShedLock runs the job on that thread) and emptied by {@code unlock}. Nested
 * locks: the innermost one. After an extend ({@code LockExtender}, {@code KeepAliveLockProvider} on
 * its own thread), the new lock. Work the job hands to another thread does not see it: pass the
 * token along.
 */
public final class CurrentLock {
  private static final ThreadLocal<Deque<Acquisition>> HELD = new ThreadLocal<>();

  private CurrentLock() {}

  /**
   * The lock of the job running on this thread.
   *
   * @throws IllegalStateException if no lock of a {@link RedlockLockProvider} is held on this
   *     thread
   */
  public static RedlockSimpleLock get() {
    return find()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no RedlockLockProvider lock is held on this thread: CurrentLock is set"
                        + " between lock() and unlock(), on the thread that locked"));
  }

  /** The lock of the job running on this thread, or empty outside one. */
  public static Optional<RedlockSimpleLock> find() {
    Deque<Acquisition> held = HELD.get();
    if (held == null) {
      return Optional.empty();
    }
    // Newest first; a lock unlocked (or not extended) on another thread is dropped here.
    for (Iterator<Acquisition> it = held.descendingIterator(); it.hasNext(); ) {
      RedlockSimpleLock lock = it.next().current();
      if (lock != null) {
        return Optional.of(lock);
      }
      it.remove();
    }
    HELD.remove();
    return Optional.empty();
  }

  /**
   * The fencing token of the job running on this thread: {@code get().fencingToken()}.
   *
   * @throws IllegalStateException if no lock of a {@link RedlockLockProvider} is held on this
   *     thread
   */
  public static long fencingToken() {
    return get().fencingToken();
  }

  /**
   * {@code acquisition} was just won on this thread. Locks of this thread that ended on another
   * thread are dropped first, so a pool thread that locks and hands the unlock elsewhere keeps none
   * of them.
   */
  static void entered(Acquisition acquisition) {
    Deque<Acquisition> held = HELD.get();
    if (held == null) {
      held = new ArrayDeque<>(2);
      HELD.set(held);
    }
    held.removeIf(earlier -> earlier.current() == null);
    held.addLast(acquisition);
  }

  /** {@code acquisition} ended; if this thread holds it, it is dropped. */
  static void left(Acquisition acquisition) {
    Deque<Acquisition> held = HELD.get();
    if (held != null) {
      held.removeLastOccurrence(acquisition);
      if (held.isEmpty()) {
        HELD.remove();
      }
    }
  }
}
