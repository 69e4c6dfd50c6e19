package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.spi.LeaseStore;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Function;

/**
 * One asynchronous acquisition ({@link LockService#acquireAsync}, {@link
 * LockService#tryAcquireAsync}): each attempt runs on one of the engine's few async attempt threads
 * (an attempt waits on the nodes, at most about {@code nodeTimeout}); between attempts no thread
 * waits, a timer submits the next one. Cancelling the future stops it: a scheduled retry is
 * dropped, an attempt in flight is interrupted (it rolls back what it sent, and its connections'
 * replies are still read), and a lease won by an attempt the cancellation raced is released.
 *
 * @param <T> what the future holds: the lease, or an optional lease for one attempt
 */
final class AsyncAcquisition<H extends LeaseStore.Held, T> {
  private final LeaseEngine<H> engine;
  private final String resource;
  private final long ttlMillis;
  private final boolean once; // tryAcquireAsync: one attempt, "held elsewhere" is an answer
  private final long began;
  private final long giveUpAt;
  private final Function<Lease, T> won;
  private final T heldElsewhere;

  /** What the caller holds. */
  final CompletableFuture<T> result = new CompletableFuture<>();

  // Guarded by this: the thread running an attempt (to interrupt), the retry scheduled.
  private Thread attempting;
  private ScheduledFuture<?> nextTry;
  private int attempts;

  private AsyncAcquisition(
      LeaseEngine<H> engine,
      String resource,
      long ttlMillis,
      boolean once,
      long maxWaitNanos,
      Function<Lease, T> won,
      T heldElsewhere) {
    this.engine = engine;
    this.resource = resource;
    this.ttlMillis = ttlMillis;
    this.once = once;
    this.won = won;
    this.heldElsewhere = heldElsewhere;
    this.began = engine.ticker().read();
    this.giveUpAt = began + maxWaitNanos;
  }

  /** Attempts until won or {@code maxWaitNanos} is spent, retrying after the engine's pause. */
  static <H extends LeaseStore.Held> CompletableFuture<Lease> acquire(
      LeaseEngine<H> engine, String resource, long ttlMillis, long maxWaitNanos) {
    return new AsyncAcquisition<H, Lease>(
            engine, resource, ttlMillis, false, maxWaitNanos, lease -> lease, null)
        .start();
  }

  /** One attempt: the lease, empty if held elsewhere, or the failure. */
  static <H extends LeaseStore.Held> CompletableFuture<Optional<Lease>> tryOnce(
      LeaseEngine<H> engine, String resource, long ttlMillis) {
    return new AsyncAcquisition<H, Optional<Lease>>(
            engine, resource, ttlMillis, true, 0, Optional::of, Optional.empty())
        .start();
  }

  private CompletableFuture<T> start() {
    engine.pending(this, true);
    result.whenComplete(
        (value, error) -> {
          engine.pending(this, false);
          if (result.isCancelled()) {
            stop();
          }
        });
    submit();
    return result;
  }

  /** Hands the next attempt to an async attempt thread; refused (too many queued): failed. */
  private void submit() {
    if (result.isDone()) {
      return;
    }
    try {
      engine.asyncAttempts().execute(this::attemptOnce);
    } catch (RejectedExecutionException e) {
      result.completeExceptionally(
          engine.isClosed()
              ? new IllegalStateException("the lock service was closed", e)
              : new RedlockException(
                  "too many asynchronous acquisitions waiting for an attempt thread; '"
                      + resource
                      + "' was not tried",
                  e));
    }
  }

  private void attemptOnce() {
    synchronized (this) {
      if (result.isDone()) {
        return; // cancelled, or the service closed, before its turn
      }
      attempting = Thread.currentThread();
    }
    LeaseEngine<H>.Attempt attempt;
    try {
      attempt = engine.attempt(resource, ttlMillis);
    } catch (InterruptedException e) {
      // Cancelled while the nodes were asked: rolled back (what was sent is released).
      result.completeExceptionally(
          new RedlockException(
              "interrupted while acquiring '"
                  + resource
                  + "'; nothing is held (what was sent is rolled back)",
              e));
      return;
    } catch (RuntimeException | Error e) {
      result.completeExceptionally(e);
      if (e instanceof Error error) {
        throw error;
      }
      return;
    } finally {
      synchronized (this) {
        attempting = null;
        Thread.interrupted(); // a cancellation's interrupt must not reach the pool's next task
      }
    }
    attempts++;
    if (attempt.lease != null) {
      if (!result.complete(won.apply(attempt.lease))) {
        attempt.lease.release(); // cancelled (or closed) as it won: nobody will hold it
      }
      return;
    }
    if (once) {
      if (attempt.reason == Reason.HELD_ELSEWHERE) {
        result.complete(heldElsewhere);
      } else {
        result.completeExceptionally(attempt.failure(resource, 1, 0));
      }
      return;
    }
    long now = engine.ticker().read();
    long left = giveUpAt - now;
    if (left <= 0) {
      result.completeExceptionally(attempt.failure(resource, attempts, now - began));
      return;
    }
    long pause = Math.min(left, engine.pauseNanos());
    synchronized (this) {
      if (result.isDone()) {
        return;
      }
      try {
        nextTry = engine.timers().at(now + pause, this::submit); // the timer only submits
      } catch (RejectedExecutionException e) {
        result.completeExceptionally(new IllegalStateException("the lock service was closed", e));
      }
    }
  }

  /** Cancelled: no retry, and an attempt in flight is interrupted (it rolls back). */
  synchronized void stop() {
    if (nextTry != null) {
      nextTry.cancel(false);
    }
    if (attempting != null) {
      attempting.interrupt();
    }
  }

  /** The service closes: what is still pending fails, and stops. */
  void closed() {
    result.completeExceptionally(new IllegalStateException("the lock service was closed"));
    stop();
  }
}
