package dev.redlock.node;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
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
 * thread: every reply is accounted for. Over TLS callers never read (a timed-out read may leave a
 * TLS stream unusable): a drain reads, bounded only by the connection's own silence.
 *
 * <p>Failure: a transport error, or the node silent for a whole node timeout while a request waits,
 * breaks the connection: every request in it fails, and the node makes a new one for the next
 * request. A request whose caller stopped waiting stays in flight, and its late reply is read and
 * dropped: a node that answers late costs its own votes, never a reply read by the wrong request.
 * Each request carries its place in the queue, and each reply is checked against it: a reply out of
 * step breaks the connection rather than answer the wrong request.
 *
 * <p>What a settled request's caller runs when told later ({@link Request#finishLater}) runs only
 * after the reader has given up the role, and never under the write lock: it may send requests on
 * this very connection, and wait for them.
 */
final class SharedConnection {
  private static final Logger log = LoggerFactory.getLogger(SharedConnection.class);

  /**
   * The most requests in flight on one connection before a new one is refused (a pipelined batch
   * may go past it by its own size): small enough that what a node that stopped reading (frozen)
   * was sent fits in the sockets' buffers, so a write does not block the caller; a silent node's
   * connection breaks after a node timeout anyway.
   */
  static final int MAX_IN_FLIGHT = 256;

  /** How many reads of what has already come a leaving reader makes for the others, at most. */
  private static final int READ_AHEAD_READS = 32;

  private static final long RESEND_LOCK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private static final byte[][] NO_ARGS = {};

  private final AutoCloseable owner; // the handshake's connection: closing it closes the socket
  private final Socket socket;

  /**
   * Under TLS, the TCP socket {@link #socket} runs on (closed first: {@link TcpUnderTls}); else
   * null.
   */
  private final Socket tcp;

  private final InputStream in;
  private final OutputStream out;
  private final boolean tls;
  private final long nodeTimeoutNanos;
  private final ScriptCalls calls;
  private final Executor drains;
  private final String name;
  private final Runnable onTransportFailure;

  /** What the handshake read about the process; fixed for the connection's life. */
  final NodeLife life;

  /** The acquire script's per-process arguments, sent with every acquire on this connection. */
  private final byte[][] acquireArgs;

  private final ReentrantLock writing = new ReentrantLock();
  private byte[] outBuffer = new byte[512]; // guarded by writing
  private long nextSeq; // guarded by writing: the place in the queue of the next request sent

  private final ConcurrentLinkedQueue<Request> inFlight = new ConcurrentLinkedQueue<>();

  /**
   * Taking a request off the queue: the reader (with its reply) and a break (failing them all) must
   * not both take from it, or a reply would go to the request behind its own.
   */
  private final Object taking = new Object();

  private final AtomicInteger inFlightCount = new AtomicInteger();
  private final AtomicBoolean reading = new AtomicBoolean();
  private final AtomicBoolean drainQueued = new AtomicBoolean();

  // The reader's (handed from reader to reader by the `reading` flag):
  private final ReplyParser parser = new ReplyParser();
  private long nextReplySeq; // the place in the queue of the request the next reply answers
  private int soTimeoutMillis = -1; // last value set on the socket
  private long lastBytesAt = System.nanoTime(); // when the node last sent anything
  private List<Runnable> tells = new ArrayList<>(); // outcomes to tell once the role is given up

  /**
   * Tests only: told the name of each point of the reader-against-break race as it is passed, so a
   * test can force the interleaving (SharedConnectionRaceTest). Null in use: one volatile read.
   */
  static volatile java.util.function.Consumer<String> racePoint;

  private static void passing(String point) {
    java.util.function.Consumer<String> hook = racePoint;
    if (hook != null) {
      hook.accept(point);
    }
  }

  /** Why the connection broke, once it has: no request goes out on it any more. */
  private volatile RuntimeException broken;

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
    this.in = socket.getInputStream();
    this.out = socket.getOutputStream();
    this.tls = socket instanceof javax.net.ssl.SSLSocket;
    this.life = life;
    this.acquireArgs = acquireArgs;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
    this.calls = calls;
    this.drains = drains;
  }

  /** Under TLS, the TCP socket it runs on; else null. */
  Socket tcp() {
    return tcp;
  }

  /** Whether new requests should go out on it: not broken, closed or retired. */
  boolean isOpen() {
    return broken == null && !retired;
  }

  /** Whether it is closed (broken or closed), so nothing is in flight on it any more. */
  boolean isClosed() {
    return broken != null;
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
  Request send(NodeRequest request) {
    Request sent = new Request(request);
    lockForWriting();
    try {
      checkCanSend();
      queueAndWrite(sent, append(0, request, false));
    } finally {
      writing.unlock();
    }
    return sent;
  }

  /**
   * Writes {@code requests} in one write, queued in that order.
   *
   * @throws JedisConnectionException as {@link #send}; then none of them is answered
   */
  void sendAll(List<Request> requests) {
    lockForWriting();
    try {
      checkCanSend();
      int length = 0;
      for (int i = 0; i < requests.size(); i++) {
        length = append(length, requests.get(i).request, false);
      }
      queueAndWrite(requests, length);
    } finally {
      writing.unlock();
    }
  }

  /** Refuses a request on a broken connection, or past {@link #MAX_IN_FLIGHT}. Under the lock. */
  private void checkCanSend() {
    RuntimeException why = broken;
    if (why != null) {
      throw new JedisConnectionException("connection to " + name + " is broken", why);
    }
    if (inFlightCount.get() >= MAX_IN_FLIGHT) {
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

  /**
   * Queues {@code requests} (before the write: a reply can never come before its request), then
   * writes the {@code length} bytes appended for them. Under the write lock.
   */
  private void queueAndWrite(List<Request> requests, int length) {
    long now = System.nanoTime();
    for (int i = 0; i < requests.size(); i++) {
      enqueue(requests.get(i), now);
    }
    write(length);
  }

  /** {@link #queueAndWrite(List, int)} for one request: no list made on the hot path. */
  private void queueAndWrite(Request request, int length) {
    enqueue(request, System.nanoTime());
    write(length);
  }

  private void enqueue(Request r, long now) {
    r.sentAt = now;
    r.seq = nextSeq++;
    inFlightCount.incrementAndGet();
    inFlight.add(r);
  }

  /** Writes the {@code length} bytes appended, the requests already queued. Under the lock. */
  private void write(int length) {
    if (inFlightCount.get() > MAX_IN_FLIGHT / 4 && !reading.get()) {
      // A backlog and nobody reading: should this write block (a node that stopped reading, its
      // socket buffers full), a drain must be there to find it silent and break the connection,
      // which ends the write. Never inline: this thread holds the write lock and the buffer.
      queueDrain(false);
    }
    boolean interrupted = Thread.interrupted(); // a virtual thread's interrupt closes the socket
    try {
      out.write(outBuffer, 0, length);
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

  private byte[][] argsOf(NodeRequest request) {
    return request.verb() == NodeRequest.Verb.ACQUIRE ? acquireArgs : NO_ARGS;
  }

  /**
   * Appends one request's call to the write buffer at {@code at}, encoded there ({@link
   * ScriptCalls}); {@code withSource}: as {@code EVAL} with the script's source. Returns the new
   * length. Under the write lock.
   */
  private int append(int at, NodeRequest request, boolean withSource) {
    byte[][] extra = argsOf(request);
    int extraBytes = 0;
    for (byte[] arg : extra) {
      extraBytes += Resp.bulkSize(arg.length);
    }
    int size = at + Resp.MAX_HEADER + calls.size(request, withSource) + extraBytes;
    if (outBuffer.length < size) {
      outBuffer = Arrays.copyOf(outBuffer, Math.max(size, 2 * outBuffer.length));
    }
    int next = Resp.header(outBuffer, at, calls.count(request) + extra.length);
    next = calls.write(request, withSource, outBuffer, next);
    for (byte[] arg : extra) {
      next = Resp.bulk(outBuffer, next, arg);
    }
    return calls.writeTail(request, outBuffer, next); // a writer's acquire has one ARGV more
  }

  /**
   * Breaks the connection: closes the socket (which also ends a write blocked on a node that does
   * not read) and fails every request in flight with {@code why}. Idempotent; any thread.
   */
  void breakWith(RuntimeException why) {
    if (broken == null) {
      broken = why;
    }
    TcpUnderTls.closeFirst(tcp); // a TLS close writes nothing, even to a full queue
    try {
      owner.close();
    } catch (Exception e) {
      IOUtils.closeQuietly(socket);
    }
    List<Runnable> told = new ArrayList<>();
    // Under the write lock, so that no request is queued after this (a writer checks broken), and
    // under `taking`, so that the reader cannot hand a reply it parsed to the request behind.
    writing.lock();
    try {
      synchronized (taking) {
        Request r;
        while ((r = inFlight.poll()) != null) {
          inFlightCount.decrementAndGet();
          told.add(
              r.settle(0, new JedisConnectionException("connection to " + name + " broke", why)));
          passing("break took one");
        }
      }
    } finally {
      writing.unlock();
    }
    runAll(told);
  }

  /**
   * A read or a write failed: the node restarted, or the network dropped the connection. The node's
   * other connections are likely dead too: {@code onTransportFailure} has the idle ones replaced
   * now, rather than each fail one vote first.
   */
  private void brokeInTransit(RuntimeException why) {
    boolean first = broken == null;
    breakWith(why);
    if (first && onTransportFailure != null) {
      onTransportFailure.run();
    }
  }

  /** Reads once into the parser, interrupts aside (a virtual thread's would close the socket). */
  private void fill(long timeoutNanos) throws IOException {
    boolean interrupted = Thread.interrupted();
    try {
      setSoTimeout(timeoutNanos);
      parser.fill(in);
      lastBytesAt = System.nanoTime();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Reads as the reader until {@code mine} is answered, {@code deadline} passes, or (when {@code
   * untilAnswered} is false) any bytes have come in; the caller holds the reader role. Plain
   * sockets only: a timed-out read leaves them usable.
   */
  private void readAsReader(Request mine, long deadline, boolean untilAnswered) {
    while (!mine.done && broken == null) {
      if (dispatchBuffered()) {
        continue;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0 && !bytesWaiting()) {
        silentUntil();
        return;
      }
      try {
        fill(Math.max(left, 1));
      } catch (SocketTimeoutException e) {
        silentUntil();
        return;
      } catch (IOException | RuntimeException e) {
        brokeInTransit(new JedisConnectionException("reading from " + name + " failed", e));
        return;
      }
      if (!untilAnswered) {
        dispatchBuffered();
        return;
      }
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
      silentUntil();
      return false;
    }
    try {
      fill(Math.max(left, 1));
    } catch (SocketTimeoutException e) {
      silentUntil();
      return false;
    } catch (IOException | RuntimeException e) {
      brokeInTransit(new JedisConnectionException("reading from " + name + " failed", e));
      return false;
    }
    dispatchBuffered();
    return broken == null;
  }

  /**
   * Before the reader leaves: hands out the replies that have already come, without waiting for
   * more (a bounded number of reads). Passing the role on costs a wake-up and, on a busy machine, a
   * wait to be scheduled; replies that arrived meanwhile are best read by the running thread.
   */
  private void readWhatHasCome() {
    for (int reads = 0; broken == null; reads++) {
      dispatchBuffered();
      if (broken != null || inFlight.isEmpty() || reads >= READ_AHEAD_READS || !bytesWaiting()) {
        return;
      }
      try {
        fill(1); // bytes are waiting: this read does not wait
      } catch (SocketTimeoutException e) {
        return;
      } catch (IOException | RuntimeException e) {
        brokeInTransit(new JedisConnectionException("reading from " + name + " failed", e));
        return;
      }
    }
  }

  /**
   * The socket was silent until the reader's deadline. A node that has sent nothing for a whole
   * node timeout while a request waited is taken for frozen or cut off: the connection breaks, and
   * what is in flight fails. One late reply alone does not break it (the node is alive, only busy:
   * the replies behind it are still read), nor does a reader's own short deadline.
   */
  private void silentUntil() {
    Request oldest = inFlight.peek();
    if (oldest == null) {
      return;
    }
    if (System.nanoTime() - Math.max(lastBytesAt, oldest.sentAt) >= nodeTimeoutNanos) {
      breakWith(
          new JedisConnectionException(
              "no reply from " + name + " within the node timeout",
              new SocketTimeoutException("Read timed out")));
    }
  }

  /** Hands every whole reply buffered to its request; true if any was handed. */
  private boolean dispatchBuffered() {
    boolean any = false;
    while (broken == null) {
      Object reply;
      try {
        reply = parser.nextUnboxed();
      } catch (RuntimeException e) {
        breakWith(e);
        return true;
      }
      if (reply == ReplyParser.INCOMPLETE) {
        return any;
      }
      any = true;
      passing("reply parsed");
      Request answered;
      synchronized (taking) {
        if (broken != null) {
          return true; // failed with everything in flight: this reply is nobody's now
        }
        answered = inFlight.poll();
      }
      passing("reply taken");
      if (answered == null || answered.seq != nextReplySeq) {
        RuntimeException outOfStep =
            new JedisConnectionException(
                "a reply from "
                    + name
                    + " out of step with its requests: the connection is dropped");
        breakWith(outOfStep);
        if (answered != null) {
          addTell(answered.settle(0, outOfStep));
        }
        return true;
      }
      nextReplySeq++;
      if (reply instanceof JedisNoScriptException noScript && !answered.withSource) {
        resendWithSource(answered, noScript); // stays in flight: counted once more below
      } else if (reply instanceof RuntimeException error && outOfStep(error)) {
        // We send only our scripts: "unknown command" or a protocol error means the node read our
        // bytes differently from how we framed them, and the replies no longer line up.
        addTell(answered.settle(0, error));
        breakWith(new JedisConnectionException("the stream to " + name + " is out of step", error));
      } else if (reply instanceof RuntimeException error) {
        addTell(answered.settle(0, error)); // an error reply: complete, the stream in step
      } else if (reply == ReplyParser.INTEGER) {
        addTell(answered.settle(parser.integer(), null));
      } else {
        // Our scripts answer integers only: anything else means the stream is not what we think.
        RuntimeException unexpected =
            new IllegalStateException(
                "unexpected reply to " + answered.request.verb() + ": " + describe(reply));
        addTell(answered.settle(0, unexpected));
        breakWith(new JedisConnectionException("unexpected reply from " + name, unexpected));
      }
      if (inFlightCount.decrementAndGet() == 0 && retired) {
        close(); // its last reply: whoever sent on it after it retired got theirs
      }
    }
    return true;
  }

  private static boolean outOfStep(RuntimeException error) {
    String message = String.valueOf(error.getMessage());
    return message.startsWith("ERR unknown command")
        || message.startsWith("ERR Protocol error")
        || message.startsWith("ERR wrong number of arguments");
  }

  private static String describe(Object reply) {
    return reply instanceof byte[] bytes
        ? new String(bytes, java.nio.charset.StandardCharsets.UTF_8)
        : String.valueOf(reply);
  }

  /**
   * The node lost its script cache (restart, {@code SCRIPT FLUSH}): {@code EVAL} sends the source
   * and caches it again. Only while the request's caller still waits (or asked to be told): a
   * lease's next request to this node starts only once this one settles, so the resend cannot be
   * overtaken by it. A caller that gave up has settled its vote as failed, and its next request (a
   * roll-back) may be on the wire already: the request fails instead. Never blocks on the write
   * lock (a writer blocked on a node that stopped reading would stop this reader too).
   */
  private void resendWithSource(Request request, JedisNoScriptException noScript) {
    Runnable told = null;
    synchronized (request) { // abandon() waits for the resend to be on the wire
      boolean locked = false;
      try {
        // Never under a write of this thread's own (its bytes are in the buffer, not yet sent).
        locked =
            !request.abandoned
                && !writing.isHeldByCurrentThread()
                && writing.tryLock(RESEND_LOCK_NANOS, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (!locked) {
        told = request.settleLocked(0, noScript);
      } else {
        try {
          if (broken != null) {
            told = request.settleLocked(0, noScript);
          } else {
            request.withSource = true;
            int length = append(0, request.request, true);
            queueAndWrite(request, length);
          }
        } catch (RuntimeException e) {
          e.addSuppressed(noScript);
          told = request.settleLocked(0, e);
        } finally {
          writing.unlock();
        }
      }
    }
    if (told != null) {
      addTell(told);
    }
  }

  private void setSoTimeout(long nanos) throws IOException {
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (nanos + 999_999) / 1_000_000));
    if (millis != soTimeoutMillis) {
      socket.setSoTimeout(millis);
      soTimeoutMillis = millis;
    }
  }

  /** Keeps what telling a later outcome takes (the reader's), if anything. */
  private void addTell(Runnable tell) {
    if (tell != null) {
      tells.add(tell);
    }
  }

  /** The outcomes to tell, taken by the reader just before it gives up the role. */
  private List<Runnable> takeTells() {
    if (tells.isEmpty()) {
      return List.of();
    }
    List<Runnable> taken = tells;
    tells = new ArrayList<>();
    return taken;
  }

  private void runAll(List<Runnable> told) {
    for (int i = 0; i < told.size(); i++) { // indexed: no iterator made for each reader's leave
      Runnable r = told.get(i);
      if (r != null) {
        r.run();
      }
    }
  }

  /**
   * Gives up the reader role and passes it on: to the first request in flight whose caller waits to
   * read, else (and waking a caller that waits on several connections at once) to a drain on an I/O
   * thread if requests are still in flight. Then tells what the role read.
   */
  private void leaveReading(List<Runnable> told) {
    reading.set(false);
    boolean handed = false;
    Thread watcher = null;
    if (inFlight.peek() != null) { // the usual leave, with nothing in flight, makes no iterator
      for (Request r : inFlight) {
        Thread reader = r.reader;
        if (reader != null) {
          LockSupport.unpark(reader); // it takes the role
          handed = true;
          break;
        }
        if (watcher == null) {
          watcher = r.waiter;
        }
      }
    }
    if (!handed) {
      if (watcher != null) {
        LockSupport.unpark(watcher); // it may read this connection itself
      }
      if (!inFlight.isEmpty() && broken == null) {
        queueDrain(); // replies must not sit in the socket, or the lag grows
      }
    }
    runAll(told);
  }

  private void queueDrain() {
    queueDrain(true);
  }

  /**
   * Has a drain read, on an I/O thread; when every I/O thread is busy, here ({@code inlineIfBusy})
   * or not at all (then whoever reads next goes on).
   */
  private void queueDrain(boolean inlineIfBusy) {
    if (!drainQueued.compareAndSet(false, true)) {
      return;
    }
    try {
      drains.execute(() -> drain(Long.MAX_VALUE));
    } catch (RejectedExecutionException e) {
      drainQueued.set(false);
      if (drains instanceof java.util.concurrent.ExecutorService service && service.isShutdown()) {
        breakWith(new JedisConnectionException("the Redlock was closed", e));
      } else if (inlineIfBusy && !writing.isHeldByCurrentThread()) {
        // Every I/O thread busy: read here, but for a node timeout at most (this may be a
        // caller's thread); whoever reads next, or the next drain, goes on.
        drain(System.nanoTime() + nodeTimeoutNanos);
      }
    }
  }

  /**
   * Reads the replies of requests nobody reads: an abandoned request's reply must not sit in the
   * socket (it would delay the next caller's), a request whose outcome is to be told must be told,
   * and over TLS every reply is read here. Reads while anything is in flight, each read bounded by
   * the node's silence: a node silent for a node timeout breaks the connection.
   */
  private void drain(long until) {
    drainQueued.set(false);
    while (broken == null
        && !inFlight.isEmpty()
        && (until == Long.MAX_VALUE || System.nanoTime() - until < 0)) {
      if (!reading.compareAndSet(false, true)) {
        return; // a reader is at work: it passes the role on, or drains again, when it leaves
      }
      List<Runnable> told;
      try {
        while (broken == null
            && tells.isEmpty()
            && (until == Long.MAX_VALUE || System.nanoTime() - until < 0)) {
          Request oldest = inFlight.peek();
          if (oldest == null
              || !readSome(Math.max(lastBytesAt, oldest.sentAt) + nodeTimeoutNanos)) {
            break;
          }
        }
      } finally {
        told = takeTells();
        reading.set(false);
      }
      runAll(told); // outside the role: what they run may send on this connection and wait
      // A request queued after the last look, with nobody reading: look again.
    }
  }

  /** A request written on this connection, waiting for its reply. */
  final class Request implements Exchange {
    final NodeRequest request;
    long sentAt; // set under the write lock, before it is queued
    long seq; // its place in the queue, set under the write lock before it is queued
    boolean withSource; // the reader's: sent again with the script's source
    private volatile boolean done;
    private long value;
    private RuntimeException error;
    private Exchange.Outcome later; // guarded by this
    private boolean abandoned; // guarded by this: its caller stopped waiting, its vote failed
    volatile Thread waiter; // woken when it settles
    volatile Thread reader; // a caller waiting in await(): woken to take the reader role

    Request(NodeRequest request) {
      this.request = request;
    }

    /**
     * Records the outcome once, wakes the waiter, and returns what telling a later outcome takes
     * (null if nothing): run it outside the reader role and the write lock.
     */
    synchronized Runnable settle(long reply, RuntimeException why) {
      return settleLocked(reply, why);
    }

    private Runnable settleLocked(long reply, RuntimeException why) {
      if (done) {
        return null;
      }
      value = reply;
      error = why;
      done = true; // the volatile write publishes value and error
      Thread w = waiter;
      if (w != null) {
        LockSupport.unpark(w);
      }
      Exchange.Outcome tellTo = later;
      return tellTo == null ? null : () -> tell(tellTo);
    }

    /** The caller stops waiting; false if it settled meanwhile (then its outcome stands). */
    private synchronized boolean abandon() {
      if (done) {
        return false;
      }
      abandoned = true;
      return true;
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
      return done || (!tls && inFlight.peek() == this && !reading.get() && bytesWaiting());
    }

    @Override
    public boolean readIfArrived() {
      if (done) {
        return true;
      }
      if (tls || !reading.compareAndSet(false, true)) {
        return done; // over TLS a drain reads; else the reader at work hands it over
      }
      List<Runnable> told;
      try {
        readWhatHasCome(); // what the socket holds now, and no more: no wait on the node
      } finally {
        told = takeTells();
        leaveReading(told);
      }
      return done;
    }

    @Override
    public boolean readByAnother() {
      return !done && (tls || reading.get());
    }

    @Override
    public void wakeOnProgress(Thread thread) {
      waiter = thread;
      if (tls && thread != null && !done) {
        queueDrain(); // over TLS only a drain reads
      }
    }

    @Override
    public boolean awaitReady(long timeoutNanos) {
      if (done || tls) {
        return true; // over TLS finish() waits for the drain
      }
      await(this, timeoutNanos, false);
      return done || (inFlight.peek() == this && bytesWaiting());
    }

    @Override
    public long finish(long timeoutNanos) {
      if (!done) {
        await(this, timeoutNanos, true);
      }
      if (!done && abandon()) {
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
     * Tells {@code outcome} the reply when it comes (on whichever thread read it, once it gave up
     * the reader role), without anyone waiting: at most about a node timeout after it was sent,
     * when a silent node's connection breaks. {@code io} is not used: the connection's own drains
     * read.
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
      return parser.hasBuffered() || in.available() > 0;
    } catch (IOException e) {
      return true; // the reader will find out
    }
  }

  /**
   * Waits for {@code mine}: reads as the reader when nobody else is (plain sockets), else parks
   * until the reader hands it its reply or the role. Interrupts do not end the wait (a release from
   * an interrupted thread is still owed); the flag is kept.
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
        if (!tls && reading.compareAndSet(false, true)) {
          List<Runnable> told = List.of();
          try {
            readAsReader(mine, deadline, untilAnswered);
            readWhatHasCome();
          } finally {
            told = takeTells();
            leaveReading(told);
          }
          if (!untilAnswered) {
            return;
          }
          continue;
        }
        Thread me = Thread.currentThread();
        mine.waiter = me;
        if (!tls) {
          mine.reader = me;
        }
        try {
          if (tls && !reading.get()) {
            queueDrain(); // over TLS only a drain reads
          }
          // Registered first, then checked: a reader that leaves after this check wakes us.
          if (!mine.done && (tls || reading.get())) {
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
