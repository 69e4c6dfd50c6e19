package dev.redlock.node;

import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.util.IOUtils;
import redis.clients.jedis.util.RedisOutputStream;

/**
 * One connection to a node that every caller shares. Requests are written in turn ({@link
 * ScriptCalls#write}, a batch in one flush) and queued in the order they went out; Redis answers in
 * that order, so each reply completes the oldest request in the queue. Who reads the replies, and
 * how, is {@link SharedReplies}'s.
 *
 * <p>Failure: a transport error, or the node silent for a whole node timeout while a request waits,
 * breaks the connection: every request in it fails, and the node makes a new one for the next
 * request. A request whose caller stopped waiting stays in flight, and its late reply is read and
 * dropped: a node that answers late costs its own votes, never a reply read by the wrong request.
 */
final class SharedConnection {
  /**
   * The most requests in flight before a new one is refused (a batch may pass it by its own size):
   * few enough that what a frozen node was sent fits in the sockets' buffers, so a write does not
   * block the caller; a silent node's connection breaks after a node timeout anyway.
   */
  static final int MAX_IN_FLIGHT = 256;

  private static final long RESEND_LOCK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private final AutoCloseable owner; // the handshake's connection: closing it closes the socket
  private final Socket socket;
  private final Socket tcp; // under TLS, the TCP socket it runs on (closed first: TcpUnderTls)

  private final RedisOutputStream out; // guarded by writing
  final String name;
  final long nodeTimeoutNanos;
  private final ScriptCalls calls;
  private final Runnable onTransportFailure;

  /** What the handshake read about the process; fixed for the connection's life. */
  final NodeLife life;

  /** The acquire script's per-process arguments, sent with every acquire on this connection. */
  private final byte[][] acquireArgs;

  private final ReentrantLock writing = new ReentrantLock();
  final SharedReplies replies;

  /** Why the connection broke, once it has: no request goes out on it any more. */
  volatile RuntimeException broken;

  /** Set once the node should make a new connection: this one closes when its last reply is in. */
  private volatile boolean retired;

  SharedConnection(
      String name,
      AutoCloseable owner,
      Socket socket,
      Socket tcp,
      NodeLife life,
      byte[][] acquireArgs,
      long nodeTimeoutNanos,
      ScriptCalls calls,
      Executor drains,
      Runnable onTransportFailure)
      throws IOException {
    this.name = name;
    this.onTransportFailure = onTransportFailure;
    this.owner = owner;
    this.socket = socket;
    this.tcp = tcp;
    this.out = new RedisOutputStream(socket.getOutputStream());
    this.life = life;
    this.acquireArgs = acquireArgs;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
    this.calls = calls;
    this.replies = new SharedReplies(this, socket, drains);
  }

  Socket tcp() {
    return tcp;
  }

  /** Whether new requests should go out on it: not broken, closed or retired. */
  boolean isOpen() {
    return broken == null && !retired;
  }

  /** Whether it broke or was closed: nothing is in flight on it any more. */
  boolean isClosed() {
    return broken != null;
  }

  /** Takes it out of use without failing what is in flight: it closes once every reply is in. */
  void retire() {
    retired = true;
    if (replies.inFlight() == 0) {
      close();
    }
  }

  void lastReplyIn() {
    if (retired) {
      close(); // whoever sent on it after it retired got theirs
    }
  }

  int inFlight() {
    return replies.inFlight();
  }

  /** A request for this connection, not sent yet ({@link #sendAll}). */
  SharedRequest request(NodeRequest request) {
    return new SharedRequest(replies, request);
  }

  /** Writes {@code request} and queues it for its reply; throws as {@link #sendAll}. */
  SharedRequest send(NodeRequest request) {
    SharedRequest sent = request(request);
    sendAll(List.of(sent));
    return sent;
  }

  /**
   * Writes {@code requests} in one flush, queued in that order. Throws {@link
   * JedisConnectionException}, none of them answered, if the connection is broken, has {@link
   * #MAX_IN_FLIGHT} requests in flight, or the write failed (then it breaks).
   */
  void sendAll(List<SharedRequest> requests) {
    lockForWriting();
    try {
      checkCanSend();
      long now = System.nanoTime();
      for (int i = 0; i < requests.size(); i++) {
        replies.enqueue(requests.get(i), now); // before the write: no reply before its request
      }
      write(requests);
    } finally {
      writing.unlock();
    }
  }

  private void checkCanSend() {
    RuntimeException why = broken;
    if (why != null) {
      throw new JedisConnectionException("connection to " + name + " is broken", why);
    }
    if (replies.inFlight() >= MAX_IN_FLIGHT) {
      throw new JedisConnectionException(
          MAX_IN_FLIGHT + " requests already in flight to " + name + ": not sent");
    }
  }

  /**
   * Takes the write lock, waiting at most a node timeout: a writer ahead may be blocked on a node
   * that stopped reading (its socket buffers full) until a reader finds the node silent and breaks
   * the connection; this caller's vote is lost either way, but its thread is not held longer.
   */
  private void lockForWriting() {
    boolean interrupted = Thread.interrupted(); // a release from an interrupted thread is owed
    try {
      if (!writing.tryLock(nodeTimeoutNanos, TimeUnit.NANOSECONDS)) {
        throw new JedisConnectionException(
            "not sent: a write to " + name + " has been blocked for the node timeout");
      }
    } catch (InterruptedException e) {
      interrupted = true;
      throw new JedisConnectionException("interrupted while waiting to write to " + name, e);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Writes the calls of {@code requests}, already queued, and flushes. Under the write lock. */
  private void write(List<SharedRequest> requests) {
    replies.beforeWrite();
    boolean interrupted = Thread.interrupted(); // a virtual thread's interrupt closes the socket
    try {
      for (int i = 0; i < requests.size(); i++) {
        calls.write(out, requests.get(i).request, requests.get(i).withSource, acquireArgs);
      }
      out.flush();
    } catch (IOException | RuntimeException | Error e) {
      // Queued but perhaps not (all) written: the stream can no longer be trusted.
      JedisConnectionException failure =
          new JedisConnectionException("could not write to " + name, e);
      brokeInTransit(failure);
      if (e instanceof Error error) {
        throw error;
      }
      throw failure;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The node lost its script cache (restart, {@code SCRIPT FLUSH}): {@code EVAL} sends the source
   * and caches it again, but only while the caller still waits (or asked to be told): a lease's
   * next request to this node starts only once this one settles, so cannot overtake the resend. A
   * caller that gave up may have its next request (a roll-back) on the wire already: the request
   * fails instead. Never blocks on the write lock (a writer blocked on a frozen node would stop
   * this reader too), nor runs under this thread's own write (its bytes may not be sent yet).
   * Returns what telling its outcome takes, if it settled.
   */
  Runnable resendWithSource(SharedRequest request, JedisNoScriptException noScript) {
    synchronized (request) { // abandon() waits for the resend to be on the wire
      boolean locked = false;
      boolean interrupted = Thread.interrupted(); // the reader's: the resend is owed all the same
      try {
        locked =
            !request.abandoned()
                && !writing.isHeldByCurrentThread()
                && writing.tryLock(RESEND_LOCK_NANOS, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        interrupted = true;
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
      if (!locked) {
        return request.settleLocked(0, noScript);
      }
      try {
        if (broken != null) {
          return request.settleLocked(0, noScript);
        }
        request.withSource = true;
        replies.enqueue(request, System.nanoTime());
        write(List.of(request));
        return null;
      } catch (RuntimeException e) {
        e.addSuppressed(noScript);
        return request.settleLocked(0, e);
      } finally {
        writing.unlock();
      }
    }
  }

  /** Whether this thread is writing (its bytes perhaps not all sent): it must not read inline. */
  boolean writingHere() {
    return writing.isHeldByCurrentThread();
  }

  /**
   * Breaks the connection: closes the socket (which also ends a write blocked on a node that does
   * not read) and fails every request in flight with {@code why}. Idempotent; any thread.
   */
  void breakWith(RuntimeException why) {
    if (broken == null) {
      broken = why;
    }
    TcpUnderTls.closeFirst(tcp);
    try {
      owner.close();
    } catch (Exception e) {
      IOUtils.closeQuietly(socket);
    }
    List<Runnable> told = new ArrayList<>();
    // Under the write lock, so that no request is queued after this (a writer checks broken).
    writing.lock();
    try {
      replies.failAll(why, told);
    } finally {
      writing.unlock();
    }
    SharedReplies.runAll(told);
  }

  /**
   * A read or a write failed: the node restarted, or the network dropped the connection. The node's
   * other connections are likely dead too: {@code onTransportFailure} has the idle ones replaced
   * now, rather than each fail one vote first.
   */
  void brokeInTransit(RuntimeException why) {
    boolean first = broken == null;
    breakWith(why);
    if (first && onTransportFailure != null) {
      onTransportFailure.run();
    }
  }

  /** Closes the socket; requests in flight fail. */
  void close() {
    breakWith(new JedisConnectionException("closed"));
  }
}
