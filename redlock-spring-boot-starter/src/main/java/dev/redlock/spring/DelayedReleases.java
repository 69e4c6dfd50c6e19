package dev.redlock.spring;

import dev.redlock.Lease;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Releases leases of {@code lockAtLeastFor} methods at their time, from one shared timer thread
 * (started on first use, never one per lock). Closed with the application context: what is still
 * waiting is released then, before the Redlock closes.
 */
final class DelayedReleases implements AutoCloseable {
  static final String THREAD_NAME = "redlock-spring-release";

  private final Set<Lease> waiting = ConcurrentHashMap.newKeySet();
  private final ScheduledThreadPoolExecutor timer;
  private volatile boolean closed;

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
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  /** Releases {@code lease} at {@code atNanos} ({@link System#nanoTime()}), or now if past. */
  void releaseAt(Lease lease, long atNanos) {
    long delay = atNanos - System.nanoTime();
    if (delay <= 0 || closed) {
      lease.release();
      return;
    }
    waiting.add(lease);
    try {
      timer.schedule(
          () -> {
            waiting.remove(lease);
            lease.release();
          },
          delay,
          TimeUnit.NANOSECONDS);
    } catch (RuntimeException rejected) { // closed meanwhile
      waiting.remove(lease);
      lease.release();
    }
  }

  @Override
  public void close() {
    closed = true;
    timer.shutdownNow();
    for (Lease lease : waiting) {
      waiting.remove(lease);
      lease.release();
    }
    try {
      timer.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
