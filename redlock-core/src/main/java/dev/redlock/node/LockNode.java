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
   * A node over {@code connections} shared, pipelined connections: a request gets {@code timeout}
   * to connect (if it must) and be answered, {@link #open} gets {@code connectTimeout}; {@code tls}
   * makes a {@code rediss://} node's sockets (null: the JVM's default); {@code drains} reads the
   * replies nobody waits for. Opens no connection yet.
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
   * Opens the connections now, so the first request finds one: blocks up to the connect timeout
   * (which may exceed the node timeout: a cold JVM, a TLS handshake). Throws if the node cannot be
   * reached in time.
   */
  default void open() {}

  /** The node's URI without credentials, for logs and accounts. */
  String name();

  /** Writes {@code request} and returns without waiting for the reply; throws if not written. */
  Exchange begin(NodeRequest request);

  /**
   * Whether the node's connections are open now. If not, writing may mean connecting first, which
   * waits on the node (a frozen node accepts TCP and never answers the handshake): such requests
   * are sent from an I/O thread, never the caller's.
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
   * Runs {@code requests} and reports each one's outcome to {@code replies} exactly once, waiting
   * at most about {@code timeoutNanos} in all. This default runs them one after another.
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
     * The lease with {@code fencingToken} released {@code resource}'s lock on this node. Runs on
     * the node's notice thread: must not block. A hint, never a grant.
     */
    void released(String resource, long fencingToken);
  }

  /**
   * Asks the node to tell {@code to} of releases of {@code resource}'s lock, until as many {@link
   * #unwatchReleases}. Returns at once; notices may be late, lost or never come: waiters poll too.
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
