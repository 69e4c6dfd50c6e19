package dev.redlock;

import dev.redlock.internal.Uninterruptibly;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Turns for attempts on the store ({@code maxAttemptsInFlight}), first come first served: a burst
 * waits here, before its attempts' clocks start, rather than on the nodes past the timeout. An
 * attempt holds its turn from its open check to its verdict, so {@code close()}, by taking every
 * turn, waits for the attempts in flight.
 */
final class AttemptTurns {
  private final int size;
  private final Semaphore turns; // not ours to lock: a count of turns

  /**
   * Set while this thread holds a turn: an attempt made from inside its own (a listener's ATTEMPT
   * event) runs in that turn, since waiting for a second could wait for itself forever.
   */
  private final ThreadLocal<Boolean> held = new ThreadLocal<>();

  AttemptTurns(int size) {
    this.size = size;
    this.turns = new Semaphore(size, true);
  }

  boolean heldHere() {
    return held.get() != null;
  }

  /**
   * Takes a turn, waiting as long as the attempts ahead take, or at most {@code waitNanos} when
   * {@code bounded}. False if none came in time; interrupted, none is taken.
   */
  boolean take(boolean bounded, long waitNanos) throws InterruptedException {
    if (!bounded) {
      turns.acquire();
    } else if (!turns.tryAcquire(Math.max(0, waitNanos), TimeUnit.NANOSECONDS)) {
      return false;
    }
    held.set(Boolean.TRUE);
    return true;
  }

  void end() {
    held.set(null); // not remove(): the thread's entry stays, so the next set allocates none
    turns.release();
  }

  /**
   * Takes every turn but this thread's own, waiting at most {@code waitNanos} through interrupts.
   * Returns how many it took, for {@link #giveBack}: 0 if not all came.
   */
  int takeAllForClose(long waitNanos) {
    int all = size - (heldHere() ? 1 : 0);
    long deadline = System.nanoTime() + waitNanos;
    boolean taken =
        all > 0
            && Uninterruptibly.await(
                () ->
                    turns.tryAcquire(
                        all, Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
    return taken ? all : 0;
  }

  void giveBack(int taken) {
    turns.release(taken);
  }
}
