package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.spi.LeaseStore;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Function;

/**
 * One asynchronous acquisition: each attempt runs on an async attempt thread, a timer submits the
 * next, and the future completes on the callback threads, so what the caller chains to it holds up
 * no attempt or timer. Any completion of the future stops it: a retry is dropped, an attempt in
 * flight interrupted (it rolls back), a lease won meanwhile released.
 *
 * @param <T> what the future holds: the lease, or an optional lease for one attempt
 */
final class AsyncAcquisition<H extends LeaseStore.Held, T> {
  private final LeaseEngine<H> engine;
  private final String resource;
  private final boolean once; // tryAcquireAsync: one attempt, "held elsewhere" is an answer
  private final Retries<H> tries;
  private final Function<Lease, T> won;
  private final T heldElsewhere;

  final CompletableFuture<T> result = new CompletableFuture<>();

  // Guarded by this: the thread running an attempt (to interrupt), the retry scheduled.
  private Thread attempting;
  private ScheduledFuture<?> nextTry;
  private final Runnable attemptTask = this::attemptOnce; // the one queued, removed on stop

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
    this.once = once;
    this.won = won;
    this.heldElsewhere = heldElsewhere;
    this.tries = new Retries<>(engine, Target.one(resource), ttlMillis, maxWaitNanos);
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
    engine.async.add(this); // refused past the bound: at most one queued attempt each
    result.whenComplete(
        (value, error) -> {
          engine.async.remove(this);
          stop(); // however it completed: cancel, orTimeout, complete(), or an outcome
        });
    submit();
    return result;
  }

  private void submit() {
    if (result.isDone()) {
      return;
    }
    try {
      engine.async.threads().execute(attemptTask);
    } catch (RejectedExecutionException e) {
      fail(
          engine.isClosed()
              ? new IllegalStateException(LeaseEngine.CLOSED, e)
              : new RedlockException(
                  "no room in the asynchronous attempt queue; '" + resource + "' was not tried",
                  e));
    }
  }

  private void attemptOnce() {
    synchronized (this) {
      if (result.isDone()) {
        return; // completed (cancelled, closed) before its turn
      }
      attempting = Thread.currentThread();
    }
    Attempt<H> attempt;
    try {
      attempt = tries.attempt();
    } catch (InterruptedException e) {
      fail(Attempt.interrupted("'" + resource + "'", e));
      return;
    } catch (Throwable e) { // a store may throw anything; the future must still complete
      fail(e);
      if (e instanceof Error error) {
        throw error;
      }
      return;
    } finally {
      synchronized (this) {
        attempting = null;
        Thread.interrupted(); // a stop's interrupt must not reach the pool's next task
      }
    }
    if (attempt == null) { // no turn before maxWait was spent: the last attempt's failure
      fail(tries.failure());
      return;
    }
    if (attempt.lease != null) {
      deliver(attempt.lease);
      return;
    }
    if (once) {
      if (attempt.reason == Reason.HELD_ELSEWHERE) {
        engine.watchdog.completion(() -> result.complete(heldElsewhere));
      } else {
        fail(attempt.failure(resource, 1, 0)); // as tryAcquire: the attempt's own account
      }
      return;
    }
    long now = engine.ticker.read();
    long left = tries.leftAt(now);
    if (left <= 0) {
      fail(tries.failure());
      return;
    }
    long pause = Math.min(left, engine.pauseNanos());
    boolean closed = false;
    synchronized (this) {
      if (result.isDone()) {
        return;
      }
      try {
        nextTry = engine.watchdog.at(now + pause, this::submit); // the timer only submits
      } catch (RejectedExecutionException e) {
        closed = true;
      }
    }
    if (closed) {
      fail(new IllegalStateException(LeaseEngine.CLOSED));
    }
  }

  /** Hands the lease to the caller on the completion pool; released if nobody takes it. */
  private void deliver(Lease lease) {
    if (result.isDone()) {
      releaseUnclaimed(lease); // here, on the attempt thread: close() waits for these
      return;
    }
    engine.watchdog.completion(
        () -> {
          if (!result.complete(won.apply(lease))) {
            releaseUnclaimed(lease); // completed (cancelled, closed) as it won
          }
        });
  }

  /** A lease nobody will hold: released, and a failure to release logged, never lost. */
  private void releaseUnclaimed(Lease lease) {
    try {
      lease.release();
    } catch (RuntimeException e) {
      org.slf4j.LoggerFactory.getLogger(AsyncAcquisition.class)
          .warn("could not release the lease on '{}' that nobody took", resource, e);
    }
  }

  private void fail(Throwable error) {
    engine.watchdog.completion(() -> result.completeExceptionally(error));
  }

  /** No retry, and an attempt in flight is interrupted (it rolls back). */
  synchronized void stop() {
    if (nextTry != null) {
      nextTry.cancel(false);
    }
    engine.async.unqueue(attemptTask); // now, not when it comes up
    if (attempting != null && attempting != Thread.currentThread()) {
      attempting.interrupt();
    }
  }

  /** The service closes: what is still pending fails, and stops. */
  void closed() {
    result.completeExceptionally(new IllegalStateException(LeaseEngine.CLOSED));
    stop();
  }
}
