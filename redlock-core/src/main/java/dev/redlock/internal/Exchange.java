package dev.redlock.internal;

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
   * Reads the reply, waiting at most {@code timeoutNanos}.
   *
   * @return the reply, as {@link NodeRequest.Verb} describes it
   * @throws RuntimeException on a transport error, a timeout or an error reply
   */
  long finish(long timeoutNanos);
}
