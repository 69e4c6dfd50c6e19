package dev.redlock.spring;

import dev.redlock.Lease;
import java.util.concurrent.Delayed;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases leases of {@code lockAtLeastFor} methods at their time, from one shared timer thread
 * (started on first use, never one per lock). Closed with the application context, it still
 * releases each at its time: a shutdown never cuts {@code lockAtLeastFor} short, so an instance
 * whose tick fires a little later does not run it again.
 */
final class DelayedReleases implements AutoCloseable {
  static final String THREAD_NAME = "redlock-spring-release";

  /** How long past the last release's time {@link #close()} waits for it, at most. */
  private static final long CLOSE_MARGIN_NANOS = TimeUnit.SECONDS.toNanos(5);

  private static final Logger log = LoggerFactory.getLogger(Locked.class);

  private final ScheduledThreadPoolExecutor timer;

  DelayedReleases() {
    this.timer =
        new ScheduledThreadPoolExecutor(
            1,
            task -> {
              Thread thread = new Thread(task, THREAD_NAME);
              thread.setDaemon(true);
              return thread;
            });
    timer.setRemoveOnCancelPolicy(true);
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(true); // close() waits for them
  }

  /**
   * Releases {@code lease} at {@code atNanos} ({@link System#nanoTime()}), or now if past. Once
   * closed, the calling thread waits for that time itself; interrupted, it leaves the lease to the
   * Redlock's close, which waits for it to the end of its validity.
   */
  void releaseAt(Lease lease, long atNanos) {
    long delay = atNanos - System.nanoTime();
    if (delay <= 0) {
      lease.release();
      return;
    }
    try {
      timer.schedule(lease::release, delay, TimeUnit.NANOSECONDS);
      return;
    } catch (RejectedExecutionException closed) {
      // waited for below, on this thread
    }
    long left;
    while ((left = atNanos - System.nanoTime()) > 0) {
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
      LockSupport.parkNanos(this, left);
    }
    lease.release();
  }

  /** Takes no more releases and waits until those waiting have run, each at its time. */
  @Override
  public void close() {
    long longest = 0;
    timer.shutdown();
    for (Runnable waiting : timer.getQueue()) {
      longest = Math.max(longest, ((Delayed) waiting).getDelay(TimeUnit.NANOSECONDS));
    }
    if (longest > 0) {
      log.info(
          "closing: waiting up to {} ms to release the locks of @Locked methods at their"
              + " lockAtLeastFor",
          longest / 1_000_000);
    }
    try {
      if (!timer.awaitTermination(longest + CLOSE_MARGIN_NANOS, TimeUnit.NANOSECONDS)) {
        timer.shutdownNow();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the rest are left to the Redlock's close
      timer.shutdownNow();
    }
  }
}
