package dev.redlock.node;

import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * The replies of a {@link SharedConnection}: the requests in flight, in the order they went out,
 * and the reader role that reads replies ({@link ReplyStream}) and hands each to the oldest one.
 *
 * <p>No thread of its own. A caller that waits for its reply and finds nobody reading becomes the
 * reader: it hands out every reply up to its own (waking their waiters), then passes the role to
 * the next waiter. A lone caller so reads its own reply with no thread hand-off, and under
 * concurrency one read of the socket serves many callers. A reply nobody waits for (its caller gave
 * up, or asked to be told later) is read by whoever reads next, or by a drain on an I/O thread.
 * Over TLS callers never read (a timed-out read may leave a TLS stream unusable): a drain reads,
 * bounded only by the connection's own silence.
 *
 * <p>What a caller told later ({@link SharedRequest#finishLater}) runs only once the reader gave up
 * the role, never under the write lock: it may send on this very connection, and wait.
 */
final class SharedReplies {
  /** How many replies of what has already come a leaving reader reads for the others, at most. */
  private static final int READ_AHEAD_REPLIES = 256;

  private final SharedConnection connection;
  private final ReplyStream in;
  final boolean tls;
  private final Executor drains;

  private final ConcurrentLinkedQueue<SharedRequest> inFlight = new ConcurrentLinkedQueue<>();
  private final AtomicInteger inFlightCount = new AtomicInteger();

  /**
   * Taking a request off the queue: the reader (with its reply) and a break (failing them all) must
   * not both take from it, or a reply would go to the request behind its own.
   */
  private final Object taking = new Object();

  final AtomicBoolean reading = new AtomicBoolean();
  private final AtomicBoolean drainQueued = new AtomicBoolean();
  private long nextSeq; // guarded by the write lock: the place in the queue of the next request

  // The reader's (handed from reader to reader by the `reading` flag):
  private long nextReplySeq; // the place in the queue of the request the next reply answers
  private List<Runnable> tells = new ArrayList<>(); // outcomes to tell once the role is given up

  SharedReplies(SharedConnection connection, Socket socket, Executor drains) throws IOException {
    this.connection = connection;
    this.in = new ReplyStream(socket);
    this.tls = socket instanceof javax.net.ssl.SSLSocket;
    this.drains = drains;
  }

  int inFlight() {
    return inFlightCount.get();
  }

  String name() {
    return connection.name;
  }

  RuntimeException broken() {
    return connection.broken;
  }

  SharedRequest oldest() {
    return inFlight.peek();
  }

  /** Queues {@code r}, sent at {@code now}. Under the write lock, before the write. */
  void enqueue(SharedRequest r, long now) {
    r.sentAt = now;
    r.seq = nextSeq++;
    inFlightCount.incrementAndGet();
    inFlight.add(r);
  }

  /**
   * Before a write: with a backlog and nobody reading, should the write block (a node that stopped
   * reading, its socket buffers full), a drain must be there to find it silent and break the
   * connection, which ends the write. Never inline: this thread holds the write lock.
   */
  void beforeWrite() {
    if (inFlightCount.get() > SharedConnection.MAX_IN_FLIGHT / 4 && !reading.get()) {
      queueDrain(false);
    }
  }

  /** Fails every request in flight with {@code why}, into {@code told}. Under the write lock. */
  void failAll(RuntimeException why, List<Runnable> told) {
    synchronized (taking) {
      SharedRequest r;
      while ((r = inFlight.poll()) != null) {
        inFlightCount.decrementAndGet();
        told.add(
            r.settle(
                0,
                new JedisConnectionException("connection to " + connection.name + " broke", why)));
      }
    }
  }

  /**
   * Reads as the reader until {@code mine} is answered, {@code deadline} passes, or (when {@code
   * untilAnswered} is false) a reply has come; the caller holds the reader role. Plain sockets
   * only: a timed-out wait leaves them usable.
   */
  private void readAsReader(SharedRequest mine, long deadline, boolean untilAnswered) {
    while (!mine.done && connection.broken == null) {
      if (dispatchBuffered() > 0) {
        continue;
      }
      if (!readSome(deadline) || !untilAnswered) {
        return;
      }
    }
  }

  /**
   * Reads once as the reader, waiting at most until {@code deadline}; false if the socket stayed
   * silent until then (see {@link #silentUntil}) or the connection broke.
   */
  private boolean readSome(long deadline) {
    if (dispatchBuffered() > 0) {
      return connection.broken == null;
    }
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      // What came while this thread could not run is not silence (over TLS, only what is
      // already decrypted can be seen so).
      if (dispatchWaiting(1) > 0) {
        return connection.broken == null;
      }
      silentUntil();
      return false;
    }
    try {
      if (!in.arrives(left)) {
        silentUntil();
        return false;
      }
    } catch (RuntimeException | Error e) {
      brokeReading(e);
      return false;
    }
    dispatchBuffered();
    return connection.broken == null;
  }

  /**
   * The socket was silent until the reader's deadline. A node that has sent nothing for a whole
   * node timeout while a request waited is taken for frozen or cut off: the connection breaks, and
   * what is in flight fails. One late reply alone does not break it (the node is alive, only busy:
   * the replies behind it are still read), nor does a reader's own short deadline. Silence counts
   * from the last bytes read, not from when they came: a reply read late starts it again.
   */
  private void silentUntil() {
    SharedRequest oldest = inFlight.peek();
    if (oldest != null
        && System.nanoTime() - Math.max(in.lastBytesAt, oldest.sentAt)
            >= connection.nodeTimeoutNanos) {
      connection.breakWith(
          new JedisConnectionException(
              "no reply from " + connection.name + " within the node timeout",
              new SocketTimeoutException("Read timed out")));
    }
  }

  /**
   * Hands out up to {@code max} replies that have already come, buffered or in the socket, without
   * waiting: passing the role on costs a wake-up and, on a busy machine, a wait to be scheduled.
   * Returns how many were read.
   */
  private int dispatchWaiting(int max) {
    int read = 0;
    try {
      while (read < max
          && connection.broken == null
          && (in.hasReply() || (!inFlight.isEmpty() && in.replyWithoutWaiting()))) {
        dispatchOne();
        read++;
      }
    } catch (RuntimeException | Error e) {
      brokeReading(e);
    }
    return read;
  }

  /** {@link #dispatchWaiting}, but only of what has been read from the socket: no system call. */
  private int dispatchBuffered() {
    int read = 0;
    while (connection.broken == null && in.hasReply()) {
      dispatchOne();
      read++;
    }
    return read;
  }

  /** Reads the reply whose whole line is buffered and hands it to the oldest request. */
  private void dispatchOne() {
    Object reply;
    try {
      reply = in.read();
    } catch (RuntimeException | Error e) {
      brokeReading(e);
      return;
    }
    SharedRequest answered;
    synchronized (taking) {
      if (connection.broken != null) {
        return; // failed with everything in flight: this reply is nobody's now
      }
      answered = inFlight.poll();
    }
    if (answered == null || answered.seq != nextReplySeq) {
      RuntimeException outOfStep =
          new JedisConnectionException(
              "a reply from "
                  + connection.name
                  + " out of step with its requests: the connection is dropped");
      connection.breakWith(outOfStep);
      if (answered != null) {
        inFlightCount.decrementAndGet();
        addTell(answered.settle(0, outOfStep));
      }
      return;
    }
    nextReplySeq++;
    try {
      hand(answered, reply);
    } catch (RuntimeException | Error e) {
      addTell(answered.settle(0, new JedisConnectionException("handing a reply failed", e)));
      brokeReading(e);
    } finally {
      if (inFlightCount.decrementAndGet() == 0) {
        connection.lastReplyIn();
      }
    }
  }

  /**
   * Reading failed: the connection breaks, whatever failed (an {@code Error} too, rethrown: part of
   * a reply may have been consumed, so nothing may be read from this stream again).
   */
  private void brokeReading(Throwable e) {
    connection.brokeInTransit(
        new JedisConnectionException("reading from " + connection.name + " failed", e));
    if (e instanceof Error error) {
      throw error;
    }
  }

  private void hand(SharedRequest answered, Object reply) {
    if (reply instanceof Long value) {
      addTell(answered.settle(value, null));
    } else if (reply instanceof JedisNoScriptException noScript && !answered.withSource) {
      addTell(connection.resendWithSource(answered, noScript)); // in flight again, if sent
    } else if (reply instanceof JedisDataException error && outOfStep(error)) {
      // We send only our scripts: "unknown command" or a protocol error means the node read our
      // bytes differently from how we framed them, and the replies no longer line up.
      addTell(answered.settle(0, error));
      connection.breakWith(
          new JedisConnectionException(
              "the stream to " + connection.name + " is out of step", error));
    } else {
      // An error reply (ReplyStream reads integers and errors only): complete, the stream in step.
      addTell(answered.settle(0, (JedisDataException) reply));
    }
  }

  private static boolean outOfStep(RuntimeException error) {
    String message = String.valueOf(error.getMessage());
    return message.startsWith("ERR unknown command")
        || message.startsWith("ERR Protocol error")
        || message.startsWith("ERR wrong number of arguments");
  }

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

  static void runAll(List<Runnable> told) {
    for (int i = 0; i < told.size(); i++) { // indexed: no iterator made for each reader's leave
      Runnable r = told.get(i);
      if (r != null) {
        r.run();
      }
    }
  }

  /**
   * Reads what the socket holds now, and no more, if nobody else is reading (plain sockets): no
   * wait on the node for a reply to start. {@code asker} polls for its reply: if none came, the
   * role is given up without a drain, since the asker reads its reply itself or has it drained
   * ({@link SharedRequest#finishLater}); a drain now would take its reply to an I/O thread and cost
   * it a hand-off.
   */
  void readIfNobodyIs(SharedRequest asker) {
    if (tls || !reading.compareAndSet(false, true)) {
      return; // over TLS a drain reads; else the reader at work hands it over
    }
    boolean drain = true;
    try {
      drain = dispatchWaiting(READ_AHEAD_REPLIES) > 0 || inFlight.peek() != asker;
    } finally {
      leaveReading(takeTells(), drain);
    }
  }

  /**
   * Gives up the reader role and passes it on: to the first request in flight whose caller waits to
   * read, else (and waking a caller that waits on several connections at once) to a drain on an I/O
   * thread if requests are still in flight and {@code drain}. Then tells what the role read.
   */
  private void leaveReading(List<Runnable> told, boolean drain) {
    reading.set(false);
    boolean handed = false;
    Thread watcher = null;
    if (inFlight.peek() != null) { // the usual leave, with nothing in flight, makes no iterator
      for (SharedRequest r : inFlight) {
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
      if (drain && !inFlight.isEmpty() && connection.broken == null) {
        queueDrain(true); // replies must not sit in the socket, or the lag grows
      }
    }
    runAll(told);
  }

  /**
   * Has a drain read, on an I/O thread; when every I/O thread is busy, here ({@code inlineIfBusy})
   * or not at all (then whoever reads next goes on).
   */
  void queueDrain(boolean inlineIfBusy) {
    if (!drainQueued.compareAndSet(false, true)) {
      return;
    }
    try {
      drains.execute(() -> drain(Long.MAX_VALUE));
    } catch (RejectedExecutionException e) {
      drainQueued.set(false);
      if (drains instanceof java.util.concurrent.ExecutorService service && service.isShutdown()) {
        connection.breakWith(new JedisConnectionException("the Redlock was closed", e));
      } else if (inlineIfBusy && !connection.writingHere()) {
        // Every I/O thread busy: read here, but for a node timeout at most (this may be a
        // caller's thread); whoever reads next, or the next drain, goes on.
        drain(System.nanoTime() + connection.nodeTimeoutNanos);
      }
    }
  }

  /**
   * Reads the replies of requests nobody reads: an abandoned request's reply must not sit in the
   * socket (it would delay the next caller's), a request whose outcome is to be told must be told,
   * and over TLS every reply is read here. Reads while anything is in flight, each wait bounded by
   * the node's silence: a node silent for a node timeout breaks the connection.
   */
  private void drain(long until) {
    drainQueued.set(false);
    while (connection.broken == null
        && !inFlight.isEmpty()
        && (until == Long.MAX_VALUE || System.nanoTime() - until < 0)) {
      if (!reading.compareAndSet(false, true)) {
        return; // a reader is at work: it passes the role on or drains when it leaves, or (a
        // look at its own oldest request) its asker reads or hands off that request, and drains
      }
      try {
        while (connection.broken == null
            && tells.isEmpty()
            && (until == Long.MAX_VALUE || System.nanoTime() - until < 0)) {
          SharedRequest oldest = inFlight.peek();
          if (oldest == null
              || !readSome(Math.max(in.lastBytesAt, oldest.sentAt) + connection.nodeTimeoutNanos)) {
            break;
          }
        }
      } finally {
        List<Runnable> told = takeTells();
        reading.set(false);
        runAll(told); // outside the role: what they run may send on this connection and wait
      }
      // A request queued after the last look, with nobody reading: look again.
    }
  }

  /**
   * Waits for {@code mine}: reads as the reader when nobody else is (plain sockets), else parks
   * until the reader hands it its reply or the role. Interrupts do not end the wait (a release from
   * an interrupted thread is still owed); the flag is kept.
   */
  void await(SharedRequest mine, long timeoutNanos, boolean untilAnswered) {
    long deadline = System.nanoTime() + timeoutNanos;
    boolean interrupted = false;
    try {
      while (!mine.done && connection.broken == null) {
        long left = deadline - System.nanoTime();
        // Even past the deadline a free role gets one pass, which waits for nothing: a reply that
        // came while this thread could not run still counts.
        if (!tls && reading.compareAndSet(false, true)) {
          try {
            readAsReader(mine, deadline, untilAnswered);
            dispatchWaiting(READ_AHEAD_REPLIES);
          } finally {
            leaveReading(takeTells(), true);
          }
          if (!untilAnswered || deadline - System.nanoTime() <= 0) {
            return;
          }
          continue;
        }
        if (left <= 0) {
          return;
        }
        Thread me = Thread.currentThread();
        mine.waiter = me;
        if (!tls) {
          mine.reader = me;
        }
        try {
          if (tls && !reading.get()) {
            queueDrain(true); // over TLS only a drain reads
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
      if (!mine.done && !reading.get() && connection.broken == null) {
        queueDrain(true); // we stop waiting: its reply, and those behind it, must still be read
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
