package dev.redlock.node;

/**
 * A request written to a node whose reply has not been read yet. {@link #finish} must be called
 * exactly once: that gives the connection back.
 */
public interface Exchange {
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
   * Reads the reply, waiting at most {@code timeoutNanos}.
   *
   * @return the reply, as {@link NodeRequest.Verb} describes it
   * @throws RuntimeException on a transport error, a timeout or an error reply
   */
  long finish(long timeoutNanos);
}
