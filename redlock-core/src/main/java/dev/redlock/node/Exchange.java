package dev.redlock.node;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * A request written to a node whose reply has not been read yet. Either {@link #finish} or {@link
 * #finishLater} is called, once: the reply is then read, whoever reads it.
 */
public interface Exchange {
  /** Where {@link #finishLater} reports, exactly once. */
  interface Outcome {
    void answered(long reply);

    void failed(RuntimeException error);
  }

  /** Whether the reply has (at least partly) arrived, so {@link #finish} would not wait for it. */
  boolean ready();

  /**
   * Waits at most about {@code timeoutNanos} (at least 1 ms) for the reply to start arriving,
   * without reading it, so the thread can turn to other nodes if this one is silent. True if it
   * arrived (or the connection failed: {@link #finish} will say).
   */
  default boolean awaitReady(long timeoutNanos) {
    return true; // exchanges that cannot wait without reading: finish() waits instead
  }

  /**
   * Whether another thread is reading this request's connection now: the caller may better wait for
   * any of its requests at once ({@link #wakeOnProgress}).
   */
  default boolean readByAnother() {
    return false;
  }

  /**
   * Reads what has already arrived on this request's connection, without waiting, if no other
   * thread is reading it; true if this request is then answered. For a caller past its deadline: a
   * reply that came while it could not run (a GC, a loaded machine) may sit in the socket behind
   * replies nobody has read yet.
   */
  default boolean readIfArrived() {
    return ready();
  }

  /**
   * Has {@code thread} unparked when this request's reply is in, or when its connection has nobody
   * reading it; null stops that. Ignored where {@link #readByAnother} is always false.
   */
  default void wakeOnProgress(Thread thread) {}

  /**
   * Reads the reply, waiting at most {@code timeoutNanos}.
   *
   * @return the reply, as {@link NodeRequest.Verb} describes it
   * @throws RuntimeException on a transport error, a timeout or an error reply
   */
  long finish(long timeoutNanos);

  /**
   * Has the reply read without the calling thread waiting: {@code outcome} is told once, on some
   * thread, within about {@code timeoutNanos}. This default has {@code io} (or, if it refuses, this
   * thread) run {@link #finish}.
   */
  default void finishLater(long timeoutNanos, Executor io, Outcome outcome) {
    Runnable read =
        () -> {
          long reply;
          try {
            reply = finish(timeoutNanos);
          } catch (RuntimeException e) {
            outcome.failed(e);
            return;
          }
          outcome.answered(reply);
        };
    try {
      io.execute(read);
    } catch (RejectedExecutionException e) {
      read.run();
    }
  }
}
