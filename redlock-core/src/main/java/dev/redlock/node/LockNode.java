package dev.redlock.node;

import java.time.Duration;
import java.util.List;

/**
 * The narrow seam between the algorithm and one Redis node: start a request, read its reply later.
 * Starting writes the request and returns at once, so one thread can have a request in flight on
 * every node before it reads any reply. Implementations must be thread-safe.
 */
public interface LockNode extends AutoCloseable {

  /**
   * A node reached over {@code connections} connections that every caller shares, requests
   * pipelined: each request given {@code timeout} to connect (if it must) and be answered, {@link
   * #open} given {@code connectTimeout}; {@code keys} names the nodes' own keys and the arguments
   * every script takes; {@code tls} makes the sockets of a {@code rediss://} node (null: the JVM's
   * default); {@code drains} runs the reading of replies nobody waits for. Opens no connection yet.
   */
  static LockNode connect(
      NodeUri uri,
      Duration timeout,
      Duration connectTimeout,
      int connections,
      NodeKeys keys,
      javax.net.ssl.SSLSocketFactory tls,
      java.util.concurrent.Executor drains) {
    return new JedisNode(uri, timeout, connectTimeout, connections, keys, tls, drains);
  }

  /**
   * Opens a connection now, if none is idle, so that the first request finds one: blocks up to the
   * connect timeout (which may exceed the node timeout: a cold JVM, a TLS handshake).
   *
   * @throws RuntimeException if the node cannot be reached or answered too late
   */
  default void open() {}

  /** The node's URI without credentials, for logs and accounts. */
  String name();

  /**
   * Writes {@code request} to the node and returns without waiting for the reply.
   *
   * @throws RuntimeException if the request could not be written (no connection, pool exhausted)
   */
  Exchange begin(NodeRequest request);

  /**
   * Whether the node's connections are open now. When one is not (first contact, or a failure broke
   * it), writing may mean connecting first, and a connect plus handshake waits on the node — a
   * frozen node accepts the TCP connection and never answers the handshake: such requests are sent
   * from an I/O thread, never the caller's.
   */
  default boolean hasIdleConnection() {
    return true;
  }

  /** How many requests are in flight now: written, their reply not read yet. */
  default int requestsInFlight() {
    return 0;
  }

  /** Where {@link #runAll} reports each request's outcome, by index. */
  interface Replies {
    void answered(int index, long reply);

    void failed(int index, RuntimeException error);
  }

  /**
   * Runs {@code requests} and reports every one's outcome to {@code replies} exactly once, waiting
   * at most about {@code timeoutNanos} in all. A node that can pipeline writes them all before it
   * reads any reply, on one connection; this default runs them one after another.
   */
  default void runAll(List<NodeRequest> requests, long timeoutNanos, Replies replies) {
    for (int i = 0; i < requests.size(); i++) {
      long reply;
      try {
        reply = begin(requests.get(i)).finish(timeoutNanos);
      } catch (RuntimeException e) {
        replies.failed(i, e);
        continue;
      }
      replies.answered(i, reply); // outside the try: what it runs must not record a failure too
    }
  }

  /** Where a node tells of a release of a watched resource's lock ({@link #watchReleases}). */
  @FunctionalInterface
  interface Notices {
    /**
     * The lock of {@code resource} was released on this node by the lease with {@code
     * fencingToken}. Runs on the node's notice thread: must not block. A hint, never a grant.
     */
    void released(String resource, long fencingToken);
  }

  /**
   * Asks the node to tell {@code to} when {@code resource}'s lock is released there, until {@link
   * #unwatchReleases} as many times. Returns at once; notices may be late, lost, or never come (a
   * node that cannot tell them): waiters poll as well. This default tells nothing.
   */
  default void watchReleases(String resource, Notices to) {}

  /** Undoes one {@link #watchReleases} of {@code resource}. */
  default void unwatchReleases(String resource) {}

  /** Whether this client is subscribed to {@code resource}'s releases here (it counts as told). */
  default boolean watches(String resource) {
    return false;
  }

  /** Closes the node's connections. Idempotent. */
  @Override
  void close();
}
