package dev.redlock;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * {@link LockService#withLockAsync}: the lease from an asynchronous acquisition, renewed while the
 * task's stage runs, released when it completes, whatever it completes with.
 */
final class AsyncLock {
  private AsyncLock() {}

  static <T> CompletableFuture<T> run(
      CompletableFuture<Lease> acquiring,
      Function<? super Lease, ? extends CompletionStage<T>> task) {
    CompletableFuture<T> out = new CompletableFuture<>();
    out.whenComplete(
        (value, error) -> {
          if (out.isCancelled()) {
            acquiring.cancel(true); // before the lock is won: stop trying (a late win is released)
          }
        });
    acquiring.whenComplete(
        (lease, error) -> {
          if (error != null) {
            out.completeExceptionally(unwrap(error));
            return;
          }
          if (out.isDone()) {
            lease.release(); // cancelled as it was won
            return;
          }
          CompletionStage<T> stage;
          try {
            lease.keepAlive();
            stage = task.apply(lease);
            if (stage == null) {
              throw new NullPointerException("the task returned null instead of a stage");
            }
          } catch (RuntimeException | Error e) {
            release(lease, e);
            out.completeExceptionally(e);
            if (e instanceof Error fatal) {
              throw fatal;
            }
            return;
          }
          stage.whenComplete(
              (value, failure) -> {
                LeaseLostException loss = ((ManagedLease<?>) lease).lossOrNull();
                Throwable cause = failure == null ? null : unwrap(failure);
                try {
                  release(lease, cause);
                } catch (RuntimeException e) {
                  out.completeExceptionally(e); // the release itself failed: say so
                  return;
                }
                if (cause != null) {
                  if (loss != null && loss != cause) {
                    cause.addSuppressed(loss);
                  }
                  out.completeExceptionally(cause);
                } else if (loss != null) {
                  out.completeExceptionally(loss); // done, but not under the lock throughout
                } else {
                  out.complete(value);
                }
              });
        });
    return out;
  }

  /** Releases in every case; a failing release is attached to the task's failure, if any. */
  private static void release(Lease lease, Throwable taskFailure) {
    try {
      lease.release();
    } catch (RuntimeException e) {
      if (taskFailure != null) {
        taskFailure.addSuppressed(e);
      } else {
        throw e;
      }
    }
  }

  private static Throwable unwrap(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }
}
