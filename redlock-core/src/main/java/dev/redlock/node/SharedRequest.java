package dev.redlock.node;

import java.net.SocketTimeoutException;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.exceptions.JedisConnectionException;

/** A request written on a {@link SharedConnection}, waiting for its reply. */
final class SharedRequest implements Exchange {
  private static final Logger log = LoggerFactory.getLogger(SharedRequest.class);

  private final SharedReplies replies;
  final NodeRequest request;
  long sentAt; // set under the write lock, before it is queued
  long seq; // its place in the queue, set under the write lock before it is queued
  boolean withSource; // the reader's: sent again with the script's source
  volatile boolean done;
  private long value;
  private RuntimeException error;
  private Exchange.Outcome later; // guarded by this
  private boolean abandoned; // guarded by this: its caller stopped waiting, its vote failed
  volatile Thread waiter; // woken when it settles
  volatile Thread reader; // a caller waiting in await(): woken to take the reader role

  SharedRequest(SharedReplies replies, NodeRequest request) {
    this.replies = replies;
    this.request = request;
  }

  /**
   * Records the outcome once, wakes the waiter, and returns what telling a later outcome takes
   * (null if nothing): run it outside the reader role and the write lock.
   */
  synchronized Runnable settle(long reply, RuntimeException why) {
    return settleLocked(reply, why);
  }

  /** {@link #settle}, the caller holding this request's monitor. */
  Runnable settleLocked(long reply, RuntimeException why) {
    if (done) {
      return null;
    }
    value = reply;
    error = why;
    done = true; // the volatile write publishes value and error
    LockSupport.unpark(waiter);
    Exchange.Outcome tellTo = later;
    return tellTo == null ? null : () -> tell(tellTo);
  }

  /** Whether its caller stopped waiting. Under this request's monitor. */
  boolean abandoned() {
    return abandoned;
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
      log.warn("a reply's consumer failed", e);
    }
  }

  @Override
  public boolean ready() {
    if (!done && !replies.tls && replies.oldest() == this) {
      replies.readIfNobodyIs(
          this); // whole replies only, without waiting: then finish() never waits
    }
    return done;
  }

  @Override
  public boolean readIfArrived() {
    if (!done) {
      replies.readIfNobodyIs(this);
    }
    return done;
  }

  @Override
  public boolean readByAnother() {
    return !done && (replies.tls || replies.reading.get());
  }

  @Override
  public void wakeOnProgress(Thread thread) {
    waiter = thread;
    if (replies.tls && thread != null && !done) {
      replies.queueDrain(true); // over TLS only a drain reads
    }
  }

  @Override
  public boolean awaitReady(long timeoutNanos) {
    if (done || replies.tls) {
      return true; // over TLS finish() waits for the drain
    }
    replies.await(this, timeoutNanos, false);
    return done;
  }

  @Override
  public long finish(long timeoutNanos) {
    if (!done) {
      replies.await(this, timeoutNanos, true);
    }
    if (!done && abandon()) {
      RuntimeException why = replies.broken();
      if (why != null) {
        throw new JedisConnectionException("connection to " + replies.name() + " broke", why);
      }
      // Still in flight: whoever reads next reads its reply and drops it.
      throw new JedisConnectionException(
          "no reply from " + replies.name() + " in time",
          new SocketTimeoutException("Read timed out"));
    }
    if (error != null) {
      throw error;
    }
    return value;
  }

  /**
   * Tells {@code outcome} the reply when it comes (on whichever thread read it, once it gave up the
   * reader role), without anyone waiting: at most about a node timeout after it was sent, when a
   * silent node's connection breaks. {@code io} is not used: the connection's own drains read.
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
    if (!replies.reading.get()) {
      // else the reader passes the role on or drains when it leaves; or it is an older request's
      // look, whose asker reads or hands off that request later, and so drains
      replies.queueDrain(true);
    }
  }
}
