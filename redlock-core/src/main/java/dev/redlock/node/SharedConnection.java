package dev.redlock.node;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.util.IOUtils;

/**
 * One connection to a node that every caller shares. Requests are written in turn, each in one
 * write (a batch in one write too), and queued in the order they went out; Redis answers in that
 * order, so each reply completes the oldest request in the queue.
 *
 * <p>It has no thread of its own. A caller that waits for its reply and finds nobody reading
 * becomes the reader: it reads replies (those of requests sent before its own, and its own), hands
 * each to the request it answers (waking that request's waiter), and when its own is in, passes the
 * role to the next waiter. A lone caller so reads its own reply with no thread hand-off, and under
 * concurrency one read of the socket serves many callers. A request nobody waits for any more (its
 * caller gave up, or asked to be told later) is read by whoever reads next, or by a drain on an I/O
 * thread: every reply is accounted for.
 *
 * <p>Failure: a transport error, or the node silent for a whole node timeout while a request waits,
 * breaks the connection: every request in it fails, and the node makes a new one for the next
 * request. A request whose caller stopped waiting stays in flight, and its late reply is read and
 * dropped: a node that answers late costs its own votes, never a reply read by the wrong request.
 */
final class SharedConnection {
  private static final Logger log = LoggerFactory.getLogger(SharedConnection.class);

  /**
   * The most requests in flight on one connection: past it, a request fails at once. Small enough
   * that the requests to a node that stopped reading (frozen) fit in the sockets' buffers, so a
   * write never blocks the caller; a silent node's connection breaks after a node timeout anyway.
   */
  static final int MAX_IN_FLIGHT = 256;

  private static final byte[][] NO_ARGS = {};

  /** Makes the frame of a request again, with the script's source, after a {@code NOSCRIPT}. */
  interface Frames {
    NodeRequest.Frame withSource(NodeRequest request);
  }

  private final AutoCloseable owner; // the handshake's connection: closing it closes the socket
  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;
  private final boolean tls;
  private final long nodeTimeoutNanos;
  private final Frames frames;
  private final Executor drains;
  private final String name;

  /** What the handshake read about the process; fixed for the connection's life. */
  final NodeLife life;

  /** The acquire script's per-process arguments, sent with every acquire on this connection. */
  private final byte[][] acquireArgs;

  private final ReentrantLock writing = new ReentrantLock();
  private byte[] outBuffer = new byte[512]; // guarded by writing
  private final ConcurrentLinkedQueue<Request> inFlight = new ConcurrentLinkedQueue<>();
  private final AtomicInteger inFlightCount = new AtomicInteger();
  private final AtomicBoolean reading = new AtomicBoolean();
  private final AtomicBoolean drainQueued = new AtomicBoolean();
  private final ReplyParser parser = new ReplyParser(); // the reader's
  private int soTimeoutMillis = -1; // the reader's: last value set on the socket
  private long lastBytesAt = System.nanoTime(); // the reader's: when the node last sent anything

  /** Why the connection broke, once it has: no request goes out on it any more. */
  private volatile RuntimeException broken;

  SharedConnection(
      String name,
      AutoCloseable owner,
      Socket socket,
      NodeLife life,
      byte[][] acquireArgs,
      long nodeTimeoutNanos,
      Frames frames,
      Executor drains)
      throws IOException {
    this.name = name;
    this.owner = owner;
    this.socket = socket;
    this.in = socket.getInputStream();
    this.out = socket.getOutputStream();
    this.tls = socket instanceof javax.net.ssl.SSLSocket;
    this.life = life;
    this.acquireArgs = acquireArgs;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
    this.frames = frames;
    this.drains = drains;
  }

  /** Set once the node should make a new connection: this one closes when its last reply is in. */
  private volatile boolean retired;

  /** Whether new requests should go out on it: not broken, closed or retired. */
  boolean isOpen() {
    return broken == null && !retired;
  }

  /**
   * Takes it out of use without failing what is in flight: it closes once every reply is in. For a
   * connection whose life is unknown (read again on the next), or that reaches an earlier process.
   */
  void retire() {
    retired = true;
    if (inFlightCount.get() == 0) {
      close();
    }
  }

  /** Requests written whose reply has not been read yet. */
  int inFlight() {
    return inFlightCount.get();
  }

  /**
   * Writes {@code request} and queues it for its reply.
   *
   * @throws JedisConnectionException if the connection is broken, has too many requests in flight,
   *     or the write failed (then the connection is broken)
   */
  Request send(NodeRequest request, NodeRequest.Frame frame) {
    Request sent = new Request(request);
    sendAll(List.of(sent), List.of(frame));
    return sent;
  }

  /**
   * Writes {@code requests} (with their {@code frames}) in one write, queued in that order.
   *
   * @throws JedisConnectionException as {@link #send}; then none of them is in flight
   */
  void sendAll(List<Request> requests, List<NodeRequest.Frame> frames) {
    writing.lock();
    try {
      RuntimeException why = broken;
      if (why != null) {
        throw new JedisConnectionException("connection to " + name + " is broken", why);
      }
      if (inFlightCount.get() + requests.size() > MAX_IN_FLIGHT) {
        throw new JedisConnectionException(
            MAX_IN_FLIGHT + " requests already in flight to " + name + ": not sent");
      }
      int length = 0;
      for (int i = 0; i < requests.size(); i++) {
        length = append(length, frames.get(i), argsOf(requests.get(i).request));
      }
      long now = System.nanoTime();
      for (Request r : requests) {
        r.sentAt = now;
        inFlightCount.incrementAndGet();
        inFlight.add(r); // queued before the write: a reply can never come before its request
      }
      try {
        out.write(outBuffer, 0, length);
      } catch (IOException e) {
        breakWith(new JedisConnectionException("could not write to " + name, e));
        throw new JedisConnectionException("could not write to " + name, e);
      }
    } finally {
      writing.unlock();
    }
  }

  private byte[][] argsOf(NodeRequest request) {
    return request.verb() == NodeRequest.Verb.ACQUIRE ? acquireArgs : NO_ARGS;
  }

  /** Appends one request to the write buffer at {@code at}; returns the new length. */
  private int append(int at, NodeRequest.Frame frame, byte[][] extra) {
    int extraBytes = 0;
    for (byte[] arg : extra) {
      extraBytes += 1 + 11 + 2 + arg.length + 2;
    }
    int size = at + Resp.MAX_HEADER + frame.bytes().length + extraBytes;
    if (outBuffer.length < size) {
      outBuffer = Arrays.copyOf(outBuffer, Math.max(size, 2 * outBuffer.length));
    }
    int next = Resp.header(outBuffer, at, frame.count() + extra.length);
    System.arraycopy(frame.bytes(), 0, outBuffer, next, frame.bytes().length);
    next += frame.bytes().length;
    for (byte[] arg : extra) {
      next = Resp.bulk(outBuffer, next, arg);
    }
    return next;
  }

  /**
   * Breaks the connection: closes the socket (which also ends a write blocked on a node that does
   * not read) and fails every request in flight with {@code why}. Idempotent.
   */
  void breakWith(RuntimeException why) {
    if (broken == null) {
      broken = why;
    }
    try {
      owner.close();
    } catch (Exception e) {
      IOUtils.closeQuietly(socket);
    }
    // Under the write lock, so that no request is queued after this drain (a writer checks broken).
    writing.lock();
    try {
      Request r;
      while ((r = inFlight.poll()) != null) {
        inFlightCount.decrementAndGet();
        r.fail(new JedisConnectionException("connection to " + name + " broke", why));
      }
    } finally {
      writing.unlock();
    }
  }

  /**
   * Reads as the reader until {@code mine} is answered, {@code deadline} passes, or (when {@code
   * untilAnswered} is false) any bytes have come in; the caller holds the reader role.
   */
  private void readAsReader(Request mine, long deadline, boolean untilAnswered) {
    while (!mine.done && broken == null) {
      if (dispatchBuffered()) {
        continue;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0 && !bytesWaiting()) {
        silentUntil(deadline);
        return;
      }
      try {
        setSoTimeout(Math.max(left, 1));
        parser.fill(in);
        lastBytesAt = System.nanoTime();
      } catch (SocketTimeoutException e) {
        silentUntil(deadline);
        return;
      } catch (IOException | RuntimeException e) {
        breakWith(new JedisConnectionException("reading from " + name + " failed", e));
        return;
      }
      if (!untilAnswered) {
        dispatchBuffered();
        return;
      }
    }
  }

  /**
   * The socket was silent until the reader's deadline. A node that has sent nothing for a whole
   * node timeout while a request waited is taken for frozen or cut off: the connection breaks, and
   * what is in flight fails. One late reply alone does not break it (the node is alive, only busy:
   * the replies behind it are still read), nor does a reader's own short deadline. Over TLS a
   * timed-out read may not leave the stream usable: it breaks at once.
   */
  private void silentUntil(long deadline) {
    Request oldest = inFlight.peek();
    if (oldest == null) {
      return;
    }
    if (tls || System.nanoTime() - Math.max(lastBytesAt, oldest.sentAt) >= nodeTimeoutNanos) {
      breakWith(
          new JedisConnectionException(
              "no reply from " + name + " within the node timeout",
              new SocketTimeoutException("Read timed out")));
    }
  }

  /**
   * Before the reader leaves: hands out every reply that has already come, without waiting for
   * more. Passing the role on costs a wake-up and, on a busy machine, a wait to be scheduled; the
   * replies that arrived meanwhile are best read by the thread that is already running.
   */
  private void readWhatHasCome() {
    while (broken == null) {
      dispatchBuffered();
      if (broken != null || inFlight.isEmpty() || !bytesWaiting()) {
        return;
      }
      try {
        setSoTimeout(1);
        parser.fill(in);
        lastBytesAt = System.nanoTime();
      } catch (SocketTimeoutException e) {
        return;
      } catch (IOException | RuntimeException e) {
        breakWith(new JedisConnectionException("reading from " + name + " failed", e));
        return;
      }
    }
  }

  /** Hands every whole reply buffered to its request; true if any was handed. */
  private boolean dispatchBuffered() {
    boolean any = false;
    while (broken == null) {
      Object reply;
      try {
        reply = parser.next();
      } catch (RuntimeException e) {
        breakWith(e);
        return true;
      }
      if (reply == ReplyParser.INCOMPLETE) {
        return any;
      }
      any = true;
      Request answered = inFlight.poll();
      if (answered == null) {
        breakWith(new JedisConnectionException("a reply from " + name + " that nobody asked for"));
        return true;
      }
      if (inFlightCount.decrementAndGet() == 0 && retired) {
        close(); // its last reply: whoever sent on it after it retired got theirs
      }
      if (reply instanceof JedisNoScriptException noScript && !answered.withSource) {
        resendWithSource(answered, noScript);
      } else if (reply instanceof RuntimeException error) {
        answered.fail(error);
      } else if (reply instanceof Long value) {
        answered.answer(value);
      } else {
        answered.fail(
            new IllegalStateException(
                "unexpected reply to " + answered.request.verb() + ": " + describe(reply)));
      }
    }
    return true;
  }

  private static String describe(Object reply) {
    return reply instanceof byte[] bytes
        ? new String(bytes, java.nio.charset.StandardCharsets.UTF_8)
        : String.valueOf(reply);
  }

  /**
   * The node lost its script cache (restart, {@code SCRIPT FLUSH}): {@code EVAL} sends the source
   * and caches it again. The request stays in flight; a lease's next request on this node starts
   * only once this one has settled, so the resend cannot overtake or be overtaken by it.
   */
  private void resendWithSource(Request request, JedisNoScriptException noScript) {
    request.withSource = true;
    try {
      sendAll(List.of(request), List.of(frames.withSource(request.request)));
    } catch (RuntimeException e) {
      e.addSuppressed(noScript);
      request.fail(e);
    }
  }

  private void setSoTimeout(long nanos) throws IOException {
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (nanos + 999_999) / 1_000_000));
    if (millis != soTimeoutMillis) {
      socket.setSoTimeout(millis);
      soTimeoutMillis = millis;
    }
  }

  /**
   * Gives up the reader role and passes it on: to the first request in flight whose caller waits,
   * else, if requests are still in flight, to a drain on an I/O thread.
   */
  private void leaveReading() {
    reading.set(false);
    for (Request r : inFlight) {
      Thread waiter = r.reader;
      if (waiter != null) {
        LockSupport.unpark(waiter); // it takes the role
        return;
      }
    }
    if (!inFlight.isEmpty() && broken == null) {
      queueDrain(); // nobody waits to read: replies must not sit in the socket, or lag grows
    }
  }

  private void queueDrain() {
    if (!drainQueued.compareAndSet(false, true)) {
      return;
    }
    try {
      drains.execute(this::drain);
    } catch (RejectedExecutionException e) {
      drainQueued.set(false);
      if (drains instanceof java.util.concurrent.ExecutorService service && service.isShutdown()) {
        breakWith(new JedisConnectionException("the Redlock was closed", e));
      } else {
        drain(); // every I/O thread busy: read here, bounded by the node timeout
      }
    }
  }

  /**
   * Reads the replies of requests nobody waits for, each up to its node timeout: an abandoned
   * request's reply must not sit in the socket (it would delay the next caller's), and a request
   * whose outcome is to be told later must be told.
   */
  private void drain() {
    drainQueued.set(false);
    while (broken == null && !inFlight.isEmpty()) {
      if (!reading.compareAndSet(false, true)) {
        return; // a reader is at work: it passes the role on, or drains again, when it leaves
      }
      try {
        // Until nothing is in flight, or the node has been silent a node timeout while a request
        // waited (then the connection breaks: see silentUntil). Callers that wait meanwhile are
        // handed their replies.
        while (broken == null) {
          Request oldest = inFlight.peek();
          if (oldest == null
              || !readSome(Math.max(lastBytesAt, oldest.sentAt) + nodeTimeoutNanos)) {
            break;
          }
        }
      } finally {
        reading.set(false);
      }
      // A request queued after the last look, with nobody reading: look again.
    }
  }

  /**
   * Reads once as the reader, waiting at most until {@code deadline}; false if the socket stayed
   * silent until then (see {@link #silentUntil}) or the connection broke.
   */
  private boolean readSome(long deadline) {
    if (dispatchBuffered()) {
      return broken == null;
    }
    long left = deadline - System.nanoTime();
    if (left <= 0 && !bytesWaiting()) {
      silentUntil(deadline);
      return false;
    }
    try {
      setSoTimeout(Math.max(left, 1));
      parser.fill(in);
      lastBytesAt = System.nanoTime();
    } catch (SocketTimeoutException e) {
      silentUntil(deadline);
      return false;
    } catch (IOException | RuntimeException e) {
      breakWith(new JedisConnectionException("reading from " + name + " failed", e));
      return false;
    }
    dispatchBuffered();
    return broken == null;
  }

  /** A request written on this connection, waiting for its reply. */
  final class Request implements Exchange {
    final NodeRequest request;
    long sentAt; // set under the write lock, before it is queued
    boolean withSource; // the reader's: sent again with the script's source
    private volatile boolean done;
    private long value;
    private RuntimeException error;
    private Exchange.Outcome later; // guarded by this
    volatile Thread waiter; // woken when it settles
    volatile Thread reader; // a caller waiting in await(): woken to take the reader role

    Request(NodeRequest request) {
      this.request = request;
    }

    void answer(long reply) {
      settle(reply, null);
    }

    void fail(RuntimeException why) {
      settle(0, why);
    }

    /** Records the outcome once; wakes the waiter; tells a later outcome, outside the lock. */
    private void settle(long reply, RuntimeException why) {
      Exchange.Outcome tellNow;
      synchronized (this) {
        if (done) {
          return;
        }
        value = reply;
        error = why;
        done = true; // the volatile write publishes value and error
        tellNow = later;
      }
      Thread w = waiter;
      if (w != null) {
        LockSupport.unpark(w);
      }
      if (tellNow != null) {
        tell(tellNow);
      }
    }

    private void tell(Exchange.Outcome outcome) {
      try {
        if (error != null) {
          outcome.failed(error);
        } else {
          outcome.answered(value);
        }
      } catch (RuntimeException e) {
        // Whoever reads must go on reading for the others: what the outcome threw is logged.
        log.warn("a reply's consumer failed on {}", name, e);
      }
    }

    @Override
    public boolean ready() {
      return done || (inFlight.peek() == this && !reading.get() && bytesWaiting());
    }

    @Override
    public boolean readByAnother() {
      return !done && reading.get();
    }

    @Override
    public void wakeOnProgress(Thread thread) {
      waiter = thread;
    }

    @Override
    public boolean awaitReady(long timeoutNanos) {
      if (done || tls) {
        return true; // over TLS a short timed-out read may not leave the stream usable
      }
      await(this, timeoutNanos, false);
      return done || (inFlight.peek() == this && bytesWaiting());
    }

    @Override
    public long finish(long timeoutNanos) {
      if (!done) {
        await(this, timeoutNanos, true);
      }
      if (!done) {
        RuntimeException why = broken;
        if (why != null) {
          throw new JedisConnectionException("connection to " + name + " broke", why);
        }
        // Still in flight: whoever reads next reads its reply and drops it.
        throw new JedisConnectionException(
            "no reply from " + name + " in time", new SocketTimeoutException("Read timed out"));
      }
      if (error != null) {
        throw error;
      }
      return value;
    }

    /**
     * Tells {@code outcome} the reply when it comes (on whichever thread reads it), without anyone
     * waiting: at most about a node timeout after it was sent, when a silent node's connection
     * breaks. {@code io} is not used: the connection's own drains read.
     */
    @Override
    public void finishLater(long timeoutNanos, Executor io, Exchange.Outcome outcome) {
      synchronized (this) {
        if (!done) {
          later = outcome;
          outcome = null;
        }
      }
      if (outcome != null) {
        tell(outcome);
        return;
      }
      if (!reading.get()) {
        queueDrain(); // else the reader passes the role on, or drains, when it leaves
      }
    }
  }

  private boolean bytesWaiting() {
    try {
      return in.available() > 0;
    } catch (IOException e) {
      return true; // the reader will find out
    }
  }

  /**
   * Waits for {@code mine}: reads as the reader when nobody else is, else parks until the reader
   * hands it its reply or the role. Interrupts do not end the wait (a release from an interrupted
   * thread is still owed); the flag is kept.
   */
  private void await(Request mine, long timeoutNanos, boolean untilAnswered) {
    long deadline = System.nanoTime() + timeoutNanos;
    boolean interrupted = false;
    try {
      while (!mine.done && broken == null) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return;
        }
        if (reading.compareAndSet(false, true)) {
          try {
            readAsReader(mine, deadline, untilAnswered);
            readWhatHasCome();
          } finally {
            leaveReading();
          }
          if (!untilAnswered) {
            return;
          }
          continue;
        }
        Thread me = Thread.currentThread();
        mine.waiter = me;
        mine.reader = me;
        try {
          // Registered first, then checked: a reader that leaves after this check wakes us.
          if (!mine.done && reading.get()) {
            if (Thread.interrupted()) {
              interrupted = true;
            }
            LockSupport.parkNanos(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
          }
        } finally {
          mine.waiter = null;
          mine.reader = null;
        }
        if (!untilAnswered) {
          return;
        }
      }
    } finally {
      if (!mine.done && !reading.get() && broken == null) {
        queueDrain(); // we stop waiting: its reply, and those behind it, must still be read
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Closes the socket; requests in flight fail. */
  void close() {
    breakWith(new JedisConnectionException("closed"));
  }
}
