package dev.redlock.timing;

import dev.redlock.internal.IoThreads;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The timers of one Redlock's leases (when to renew, when a lease's time is up): two threads that
 * never wait on a node and never run user code, so neither a frozen node nor a slow callback delays
 * another lease. User code runs on {@value #CALLBACK_THREADS} callback threads; stores that can
 * only wait renew on two renewal threads.
 */
public final class Watchdog implements Timers {
  private static final String NAME_PREFIX = "redlock-watchdog-";

  private static final Logger log = LoggerFactory.getLogger(Watchdog.class);

  private final ScheduledThreadPoolExecutor timer;
  private final ThreadPoolExecutor renewals;
  private final ThreadPoolExecutor callbacks;

  private static final String CALLBACK_PREFIX = "redlock-callback-";
  private static final long CLOSE_WAIT_SECONDS = 2;

  /** How many callbacks may block at once before the next one waits for a thread. */
  private static final int CALLBACK_THREADS = 8;

  private final Ticker ticker;

  public Watchdog(Ticker ticker) {
    this.ticker = ticker;
    this.timer = new ScheduledThreadPoolExecutor(2, IoThreads.daemonThreads(NAME_PREFIX));
    timer.setRemoveOnCancelPolicy(true); // a released lease leaves nothing behind in the queue
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    // Unbounded queues: a renewal refused for want of a thread would lose a healthy lease.
    this.renewals = pool(2, "redlock-renewal-", new LinkedBlockingQueue<>());
    this.callbacks = pool(CALLBACK_THREADS, CALLBACK_PREFIX, new LinkedBlockingQueue<>());
  }

  /** {@code threads} threads that start on first use and end when idle. */
  public static ThreadPoolExecutor pool(int threads, String prefix, BlockingQueue<Runnable> queue) {
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads, threads, 30, TimeUnit.SECONDS, queue, IoThreads.daemonThreads(prefix));
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /** Runs user code (a loss's callbacks, an event) on a callback thread; after close, drops it. */
  public void callback(Runnable userCode) {
    runSafelyOn(callbacks, userCode, "callback dropped: the Redlock is closed");
  }

  /** Runs what completes a caller's future on a callback thread; once closed, on this one. */
  public void completion(Runnable completion) {
    try {
      callbacks.execute(completion);
    } catch (RejectedExecutionException e) {
      completion.run();
    }
  }

  /** Runs a renewal on a renewal thread; after close, drops it. */
  public void renewal(Runnable renewal) {
    runSafelyOn(renewals, renewal, "renewal dropped: the Redlock is closing");
  }

  private static void runSafelyOn(Executor threads, Runnable task, String dropped) {
    try {
      threads.execute(() -> runSafely(task));
    } catch (RejectedExecutionException e) {
      log.debug(dropped);
    }
  }

  /** Runs {@code task} at {@code instant} on the monotonic clock (at once if it has passed). */
  @Override
  public ScheduledFuture<?> at(long instant, Runnable task) {
    return timer.schedule(
        () -> runSafely(task), Math.max(0, instant - ticker.read()), TimeUnit.NANOSECONDS);
  }

  private static void runSafely(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      // A timer thread must survive anything a lease or a callback throws.
      log.error("unexpected error in a lease timer", e);
    }
  }

  /** Stops the timers; pending renewals and deadlines are dropped. */
  public void close() {
    timer.shutdownNow();
    renewals.shutdownNow();
    // What is queued still runs, bounded: a loss found before close is still told.
    callbacks.shutdown();
    if (!Thread.currentThread().getName().startsWith(CALLBACK_PREFIX)) {
      try {
        if (!callbacks.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS)) {
          log.warn(
              "closed with loss callbacks or listeners still running after {} s; they go on alone",
              CLOSE_WAIT_SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
