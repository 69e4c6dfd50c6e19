package dev.redlock.testkit;

import dev.redlock.Lease;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The client fault: a holder that stalls — a GC pause, a swapped-out process — between checking its
 * lease and acting on it. The stall is the fault itself, so it is a plain park, bounded.
 */
public final class Stall {
  private Stall() {}

  /**
   * Stalls the calling thread until {@code lease}'s validity has ended and {@code until} holds (for
   * instance "another client has written"), at most {@code maxMillis} ms.
   *
   * @throws IllegalStateException if {@code until} does not hold in time
   */
  public static void pastValidity(Lease lease, BooleanSupplier until, long maxMillis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
    LockSupport.parkNanos(lease.remainingValidity().toNanos());
    while (lease.remainingValidity().toNanos() > 0 || !until.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "the stall's condition did not hold in " + maxMillis + " ms");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
    }
  }
}
