package dev.redlock.internal;

/**
 * The narrow seam between the algorithm and one Redis node: start a request, read its reply later.
 * Starting writes the request and returns at once, so one thread can have a request in flight on
 * every node before it reads any reply. Implementations must be thread-safe.
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
   * Whether the node has an idle open connection now. When it has none (first contact, every
   * connection busy, or a failure dropped them), writing means connecting first, and a connect plus
   * handshake waits on the node — a frozen node accepts the TCP connection and never answers the
   * handshake: such requests are sent from an I/O thread, never the caller's.
   */
  default boolean hasIdleConnection() {
    return true;
  }

  /** How many connections are in use now (a request in flight, or its reply being read). */
  default int connectionsInUse() {
    return 0;
  }

  /** Closes the node's connections. Idempotent. */
  @Override
  void close();
}
