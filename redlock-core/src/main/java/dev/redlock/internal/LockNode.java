package dev.redlock.internal;

/**
 * The narrow seam between the algorithm and one Redis node: start a request, read its reply
 * later. Starting writes the request and returns at once, so one thread can have a request in
 * flight on every node before it reads any reply. Implementations must be thread-safe.
 */
public interface LockNode extends AutoCloseable {

  /** The reply of {@link NodeRequest.Verb#ACQUIRE} when the key is held by another owner. */
  long HELD = 0;

  /** The node's URI without credentials, for logs and accounts. */
  String name();

  /**
   * Writes {@code request} to the node and returns without waiting for the reply.
   *
   * @throws RuntimeException if the request could not be written (no connection, pool exhausted)
   */
  Exchange begin(NodeRequest request);

  /**
   * Whether {@link #begin} can write at once, without first opening a connection (a connect and a
   * handshake, which wait on the node). A hint: when false, the request is sent from an I/O
   * thread so that a frozen or unreachable node never holds up the caller.
   */
  default boolean ready() {
    return true;
  }

  /** Closes the node's connections. Idempotent. */
  @Override
  void close();
}
