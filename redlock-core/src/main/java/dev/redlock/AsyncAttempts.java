package dev.redlock;

import dev.redlock.timing.Watchdog;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The few threads that run asynchronous attempts, and the asynchronous acquisitions not completed
 * yet, which fail when the engine closes.
 */
final class AsyncAttempts {
  /** The most asynchronous attempts in progress at once; more wait in a bounded queue. */
  static final int THREADS = 4;

  /** The most asynchronous acquisitions pending at once; past it a new one fails at once. */
  static final int QUEUE = 4096;

  static final String THREAD_PREFIX = "redlock-async-";

  static final long CLOSE_MARGIN_MILLIS = 1000;

  private final BooleanSupplier closed;
  private final Set<AsyncAcquisition<?, ?>> pending = ConcurrentHashMap.newKeySet();
  private final ThreadPoolExecutor pool;

  AsyncAttempts(BooleanSupplier closed) {
    this.closed = closed;
    this.pool = Watchdog.pool(THREADS, THREAD_PREFIX, new LinkedBlockingQueue<>(QUEUE));
  }

  Executor threads() {
    return pool;
  }

  /** Takes a queued attempt out of the queue (its acquisition completed meanwhile). */
  void unqueue(Runnable attempt) {
    pool.remove(attempt);
  }

  /**
   * Counts an acquisition in. Past {@link #QUEUE} pending ones, a new one fails at once: each has
   * at most one attempt queued, so the queue never refuses a retry.
   */
  void add(AsyncAcquisition<?, ?> acquisition) {
    if (pending.size() >= QUEUE) {
      acquisition.result.completeExceptionally(
          new RedlockException(
              QUEUE
                  + " asynchronous acquisitions are pending already on this Redlock: not started"));
      return;
    }
    pending.add(acquisition);
    if (closed.getAsBoolean()) {
      acquisition.closed(); // closed meanwhile: close() did not see it
    }
  }

  void remove(AsyncAcquisition<?, ?> acquisition) {
    pending.remove(acquisition);
  }

  /**
   * Fails what is pending and stops the threads, waiting at most {@code waitMillis} (and a margin)
   * for the attempts in flight to roll back before the store closes.
   */
  void close(long waitMillis) {
    for (AsyncAcquisition<?, ?> acquisition : new ArrayList<>(pending)) {
      acquisition.closed();
    }
    if (Thread.currentThread().getName().startsWith(THREAD_PREFIX)) {
      pool.shutdown(); // closed from one of its own threads: do not interrupt, nor wait on, it
      return;
    }
    pool.shutdownNow();
    try {
      pool.awaitTermination(waitMillis + CLOSE_MARGIN_MILLIS, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
