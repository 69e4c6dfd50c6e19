package dev.redlock.shedlock;

import dev.redlock.Lease;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Delayed;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The provider's leases from lock to release: it knows which are held, and releases unlocked ones
 * once their {@code lockAtLeastFor} has passed, from one daemon timer thread per provider (started
 * by the first such release, never one per lock). Closing waits for the jobs still running to
 * unlock, then for those releases: closing the Redlock next releases every lease it holds, and an
 * early release would let another instance run the job while it runs, or again (a lagging clock
 * fires the same tick later), which is what {@code lockAtLeastFor} is for.
 */
final class DelayedReleases implements AutoCloseable {
  static final String THREAD_NAME = "redlock-shedlock-release";
  private static final Logger log = LoggerFactory.getLogger(RedlockLockProvider.class);

  /** How long past the last release's time {@link #close()} waits for it, at most. */
  private static final long CLOSE_MARGIN_NANOS = TimeUnit.SECONDS.toNanos(10);

  private final ScheduledThreadPoolExecutor timer;
  private final Set<Acquisition> held = ConcurrentHashMap.newKeySet();
  private volatile boolean closing;

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
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(true); // close() waits for them
  }

  /**
   * Releases {@code lease} at {@code atNanos} ({@link System#nanoTime()}), or now if that has
   * passed. Once closed, the calling thread waits for that time itself (a job that ends while the
   * application shuts down keeps its {@code lockAtLeastFor} too); interrupted, it leaves the lease
   * held, to its ttl or the Redlock's close.
   */
  void releaseAt(Lease lease, long atNanos) {
    if (atNanos - System.nanoTime() <= 0) {
      lease.release();
      return;
    }
    synchronized (this) { // not between close()'s shutdown and its look at the queue
      try {
        timer.schedule(lease::release, atNanos - System.nanoTime(), TimeUnit.NANOSECONDS);
        return;
      } catch (RejectedExecutionException closed) {
        // waited for below, on this thread
      }
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

  /** {@code acquisition} was just won: {@link #close()} waits until it ends. */
  void held(Acquisition acquisition) {
    held.add(acquisition);
  }

  /** {@code acquisition} was unlocked, or its extend failed. */
  void ended(Acquisition acquisition) {
    if (held.remove(acquisition) && closing) {
      synchronized (this) {
        notifyAll();
      }
    }
  }

  /** Throws {@link IllegalStateException} if closed or closing. */
  void checkOpen() {
    if (closing) {
      throw new IllegalStateException("this RedlockLockProvider is closed");
    }
  }

  /**
   * Takes no more releases and waits until those waiting have run, each at its time (at most the
   * longest {@code lockAtLeastFor} left, plus a margin); interrupted, it stops waiting and leaves
   * them held (the flag is set again).
   */
  @Override
  public void close() {
    closing = true;
    try {
      awaitHeldUnlocked();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      timer.shutdownNow();
      return;
    }
    long longest = 0;
    synchronized (this) {
      timer.shutdown();
      for (Runnable waiting : timer.getQueue()) {
        longest = Math.max(longest, ((Delayed) waiting).getDelay(TimeUnit.NANOSECONDS));
      }
    }
    if (longest > 0) {
      log.info(
          "closing: {} lock(s) stay held until their lockAtLeastFor has passed, {} ms at most",
          timer.getQueue().size(),
          TimeUnit.NANOSECONDS.toMillis(longest));
    }
    try {
      if (!timer.awaitTermination(longest + CLOSE_MARGIN_NANOS, TimeUnit.NANOSECONDS)) {
        log.warn("closing: releases still pending after {} ms", longest / 1_000_000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      timer.shutdownNow();
    }
  }

  /**
   * Waits until every lock still held is unlocked (its job ended) or its lease has run out, however
   * the job extends it meanwhile.
   */
  private void awaitHeldUnlocked() throws InterruptedException {
    long left = longestValidityHeld();
    if (left <= 0) {
      return;
    }
    log.info(
        "closing: waiting for {} running job(s) to unlock ({}), {} ms at most unless extended",
        held.size(),
        held.stream().map(a -> a.name).sorted().toList(),
        TimeUnit.NANOSECONDS.toMillis(left));
    synchronized (this) {
      while ((left = longestValidityHeld()) > 0) {
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
    }
  }

  private long longestValidityHeld() {
    return held.stream().mapToLong(a -> a.lease.remainingValidity().toNanos()).max().orElse(0);
  }
}
