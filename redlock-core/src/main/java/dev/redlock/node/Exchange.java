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

  /**
   * Whether the reply has (at least partly) arrived, so {@link #finish} would not wait for the
   * node.
   */
  boolean ready();

  /**
   * Waits at most about {@code timeoutNanos} (at least a millisecond) for the reply to start
   * arriving, without reading it, so the waiting thread can turn to other nodes if this one is
   * silent.
   *
   * @return true if the reply has arrived (or the connection failed: {@link #finish} will say);
   *     false if the time passed first
   */
  default boolean awaitReady(long timeoutNanos) {
    return true; // exchanges that cannot wait without reading: finish() waits instead
  }

  /**
   * Whether another thread is reading this request's connection now, so that waiting here would
   * only wait for that thread: the caller may better wait for any of its requests at once ({@link
   * #wakeOnProgress}). False for exchanges on a connection of their own.
   */
  default boolean readByAnother() {
    return false;
  }

  /**
   * Reads what has already arrived on this request's connection, without waiting for the node, if
   * no other thread is reading it now; true if this request is then answered, so that {@link
   * #finish} returns at once. For a caller that finds its deadline passed: a reply that came while
   * it could not run (a collection, a throttled or loaded machine) is in the socket, possibly
   * behind other callers' replies that nobody has read yet. This default reads nothing.
   */
  default boolean readIfArrived() {
    return ready();
  }

  /**
   * Has {@code thread} unparked ({@link java.util.concurrent.locks.LockSupport#unpark}) when this
   * request's reply is in, or when its connection has nobody reading it; null stops that. Exchanges
   * that cannot do this ignore it (then {@link #readByAnother} is false).
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
   * Has the reply read without the calling thread waiting for it: {@code outcome} is told once, on
   * some thread, within about {@code timeoutNanos}. This default has {@code io} run {@link #finish}
   * (the calling thread, if {@code io} refuses).
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
