package dev.redlock.timing;

import java.util.concurrent.ScheduledFuture;

/** The one thing the quorum needs from the lease timers: run a task later, never waiting on it. */
public interface Timers {
  /**
   * Runs {@code task} at {@code instantNanos} on the monotonic clock (at once if it has passed).
   *
   * @throws java.util.concurrent.RejectedExecutionException once the timers are closed
   */
  ScheduledFuture<?> at(long instantNanos, Runnable task);
}
