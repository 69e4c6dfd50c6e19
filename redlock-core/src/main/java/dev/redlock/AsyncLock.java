package dev.redlock;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

/**
 * {@link Redlock#withLockAsync}: the lease renewed while the task's stage runs, released when it
 * completes. Task and release run on the callback threads, never on the thread that completes the
 * stage (an event loop must not wait on a release).
 */
final class AsyncLock {
  private AsyncLock() {}

  static <T> CompletableFuture<T> run(
      CompletableFuture<Lease> acquiring,
      Function<? super Lease, ? extends CompletionStage<T>> task,
      boolean stopTaskOnLoss,
      Executor callbacks,
      BooleanSupplier serviceClosed) {
    CompletableFuture<T> out = new CompletableFuture<>();
    // Completed before the lock is won, the acquisition stops; once won this does nothing.
    out.whenComplete((value, error) -> acquiring.cancel(true));
    acquiring.whenComplete(
        (lease, error) -> {
          if (error != null) {
            out.completeExceptionally(unwrap(error));
            return;
          }
          if (out.isDone()) {
            lease.release(); // completed as it was won: nobody will run the task
            return;
          }
          CompletionStage<T> stage;
          try {
            lease.keepAlive();
            stage = task.apply(lease);
            if (stage == null) {
              throw new NullPointerException("the task returned null instead of a stage");
            }
          } catch (Throwable e) { // anything, even a checked exception thrown sneakily
            completeAfterRelease(out, lease, null, e, serviceClosed);
            if (e instanceof Error fatal) {
              throw fatal;
            }
            return;
          }
          if (stopTaskOnLoss) {
            lease.onLost(
                loss -> {
                  try {
                    stage.toCompletableFuture().cancel(true); // as withLock interrupts its task
                  } catch (UnsupportedOperationException e) {
                    // a stage that cannot be cancelled runs on; the loss is reported at its end
                  }
                });
          }
          stage.whenCompleteAsync(
              (value, failure) -> {
                Throwable cause = failure == null ? null : unwrap(failure);
                completeAfterRelease(out, lease, value, cause, serviceClosed);
              },
              callbacks);
        });
    return out;
  }

  /**
   * Releases the lease, then completes {@code out}: with the task's failure (the loss attached), or
   * its value, unless the lease was lost or released by a close while it ran.
   */
  private static <T> void completeAfterRelease(
      CompletableFuture<T> out,
      Lease lease,
      T value,
      Throwable failure,
      BooleanSupplier serviceClosed) {
    LeaseLostException loss = ((ManagedLease<?>) lease).lossOrNull();
    // Not valid, not lost, and the service closed: close() released it while the task ran.
    boolean releasedUnderIt = loss == null && !lease.isValid() && serviceClosed.getAsBoolean();
    try {
      lease.release();
    } catch (Throwable e) {
      if (failure == null) {
        out.completeExceptionally(e); // the release itself failed: say so
        return;
      }
      failure.addSuppressed(e);
    }
    if (failure instanceof CancellationException && loss != null) {
      failure = loss; // we cancelled the stage for the loss: the loss is what happened
    }
    if (failure != null) {
      if (loss != null && loss != failure) {
        failure.addSuppressed(loss);
      }
      out.completeExceptionally(failure);
    } else if (loss != null) {
      out.completeExceptionally(loss);
    } else if (releasedUnderIt) {
      out.completeExceptionally(
          new IllegalStateException(
              "the lease on '"
                  + lease.resource()
                  + "' was released by a close of its Redlock while the task ran"));
    } else {
      out.complete(value);
    }
  }

  private static Throwable unwrap(Throwable error) {
    return error instanceof CompletionException && error.getCause() != null
        ? error.getCause()
        : error;
  }
}
