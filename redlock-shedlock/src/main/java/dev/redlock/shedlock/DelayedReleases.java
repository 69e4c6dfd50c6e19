package dev.redlock.shedlock;

import dev.redlock.Lease;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Releases unlocked leases once their {@code lockAtLeastFor} has passed, from one daemon timer
 * thread per provider (started by the first such release, never one per lock).
 */
final class DelayedReleases implements AutoCloseable {
  static final String THREAD_NAME = "redlock-shedlock-release";

  private final ScheduledThreadPoolExecutor timer;

  DelayedReleases() {
    timer =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread thread = new Thread(task, THREAD_NAME);
              thread.setDaemon(true);
              return thread;
            });
    timer.setRemoveOnCancelPolicy(true);
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  /**
   * Releases {@code lease} at {@code atNanos} ({@link System#nanoTime()}), or now if that has
   * passed. Once closed, a lease whose time has not come is left held: the Redlock's close or its
   * ttl ends it, never sooner than asked.
   */
  void releaseAt(Lease lease, long atNanos) {
    long delay = atNanos - System.nanoTime();
    if (delay <= 0) {
      lease.release();
      return;
    }
    try {
      timer.schedule(lease::release, delay, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException closed) {
      // left held, as the class says
    }
  }

  /** Throws {@link IllegalStateException} if closed. */
  void checkOpen() {
    if (timer.isShutdown()) {
      throw new IllegalStateException("this RedlockLockProvider is closed");
    }
  }

  /** Stops the timer; a release already running finishes first (bounded by the nodes' timeout). */
  @Override
  public void close() {
    timer.shutdownNow();
    try {
      timer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
