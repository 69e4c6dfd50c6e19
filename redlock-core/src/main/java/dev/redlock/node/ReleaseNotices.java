package dev.redlock.node;

import dev.redlock.internal.IoThreads;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * One node's release notices: a subscriber connection on which the node tells us that a lock key we
 * watch was released ({@code release.lua} publishes the released lease's fencing token on the lock
 * key's channel). Waiters use a notice to ask again at once instead of after their retry pause; a
 * notice is only a hint, never a grant, so a lost, late or forged one costs an attempt or a pause,
 * nothing else.
 *
 * <p>The connection and its reader thread (named {@code redlock-io-notices-<node>}) are made when
 * the first resource is watched and live until {@link #close}, or until the connection breaks with
 * nothing watched; a broken one is made again after {@link #RECONNECT_PAUSE_NANOS} while anything
 * is watched. Meanwhile waiters poll, as they do without notices. Subscribing and unsubscribing are
 * written by an I/O thread, never the caller's: a frozen node must not hold up a waiter.
 */
final class ReleaseNotices {
  private static final Logger log = LoggerFactory.getLogger(ReleaseNotices.class);

  /** How long a broken subscriber connection rests before it is made again. */
  static final long RECONNECT_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final String name;
  private final HostAndPort address;
  private final JedisClientConfig config;
  private final String keyPrefix;
  private final Executor io;

  /** Watched resources, each with how many lines watch it (a line may go and come back). */
  private final ConcurrentHashMap<String, Integer> wanted = new ConcurrentHashMap<>();

  private final AtomicBoolean flushQueued = new AtomicBoolean();
  private volatile LockNode.Notices listener;
  private volatile boolean closed;
  private volatile SubscriberConnection connection; // volatile: close() ends it without the lock

  // Guarded by this:
  private Thread reader;
  private final Set<String> subscribed = new HashSet<>();
  private boolean refusedLogged;

  ReleaseNotices(
      String name, HostAndPort address, JedisClientConfig config, String keyPrefix, Executor io) {
    this.name = name;
    this.address = address;
    this.config = config;
    this.keyPrefix = keyPrefix;
    this.io = io;
  }

  /** Starts telling {@code to} of releases of {@code resource}'s lock on this node. */
  void watch(String resource, LockNode.Notices to) {
    listener = to;
    wanted.merge(resource, 1, Integer::sum);
    synchronized (this) {
      if (closed) {
        return;
      }
      if (reader == null) {
        reader = new Thread(this::run, IoThreads.NAME_PREFIX + "notices-" + name);
        reader.setDaemon(true);
        reader.start();
        return; // it subscribes to everything wanted once connected
      }
    }
    queueFlush();
  }

  /** Stops watching {@code resource} (once per {@link #watch}). */
  void unwatch(String resource) {
    wanted.computeIfPresent(resource, (r, lines) -> lines == 1 ? null : lines - 1);
    queueFlush();
  }

  /** Whether a SUBSCRIBE to {@code resource}'s channel was written on the current connection. */
  synchronized boolean isSubscribed(String resource) {
    return connection != null && subscribed.contains(resource);
  }

  /** Ends the connection and its reader thread; watching afterwards does nothing. Idempotent. */
  void close() {
    closed = true;
    SubscriberConnection c = connection;
    if (c != null) {
      c.close(); // the reader's blocked read ends, and so does the thread
    }
    Thread t;
    synchronized (this) {
      t = reader;
    }
    if (t != null) {
      LockSupport.unpark(t); // resting before a reconnect
    }
  }

  private void queueFlush() {
    if (connection == null || !flushQueued.compareAndSet(false, true)) {
      return; // not connected: the reader subscribes to everything wanted when it connects
    }
    try {
      io.execute(this::flush);
    } catch (RejectedExecutionException e) {
      flushQueued.set(false); // closing
    }
  }

  private void flush() {
    flushQueued.set(false);
    synchronized (this) {
      SubscriberConnection c = connection;
      if (c != null && !closed) {
        sendChanges(c);
      }
    }
  }

  /** Subscribes to what is wanted and not subscribed, and the other way round; one write. */
  private void sendChanges(SubscriberConnection c) {
    List<String> subscribe = new ArrayList<>();
    for (String resource : wanted.keySet()) {
      if (subscribed.add(resource)) {
        subscribe.add(keyPrefix + resource);
      }
    }
    List<String> unsubscribe = new ArrayList<>();
    for (var it = subscribed.iterator(); it.hasNext(); ) {
      String resource = it.next();
      if (!wanted.containsKey(resource)) {
        it.remove();
        unsubscribe.add(keyPrefix + resource);
      }
    }
    try {
      if (!subscribe.isEmpty()) {
        c.send(Protocol.Command.SUBSCRIBE, subscribe);
      }
      if (!unsubscribe.isEmpty()) {
        c.send(Protocol.Command.UNSUBSCRIBE, unsubscribe);
      }
      c.flushNow();
    } catch (RuntimeException e) {
      c.close(); // the reader finds out, and connects again while anything is watched
    }
  }

  /** The reader thread: connects, reads notices until the connection ends, and again if wanted. */
  private void run() {
    for (; ; ) {
      SubscriberConnection c = null;
      try {
        c = new SubscriberConnection(address, config);
        c.setSoTimeout(0); // a subscriber waits for notices as long as it takes; close() ends it
        synchronized (this) {
          if (closed) {
            return;
          }
          connection = c;
          subscribed.clear();
          sendChanges(c);
        }
        read(c);
      } catch (RuntimeException e) {
        if (!closed) {
          log.debug("release notices from {} stopped; waiters poll meanwhile", name, e);
        }
      } finally {
        synchronized (this) {
          if (connection == c) {
            connection = null;
          }
          subscribed.clear();
        }
        if (c != null) {
          c.close();
        }
      }
      synchronized (this) {
        if (closed || wanted.isEmpty()) {
          reader = null; // a later watch starts another
          return;
        }
      }
      LockSupport.parkNanos(this, RECONNECT_PAUSE_NANOS); // close() unparks
    }
  }

  private void read(SubscriberConnection c) {
    while (!closed) {
      Object reply;
      try {
        reply = c.getUnflushedObject();
      } catch (JedisDataException e) {
        refused(e); // a SUBSCRIBE refused (an ACL without channels): the stream is still in step
        continue;
      }
      if (reply instanceof List<?> message
          && message.size() == 3
          && message.get(0) instanceof byte[] kind
          && "message".equals(new String(kind, StandardCharsets.US_ASCII))
          && message.get(1) instanceof byte[] channel
          && message.get(2) instanceof byte[] payload) {
        notice(new String(channel, StandardCharsets.UTF_8), payload);
      }
    }
  }

  private void notice(String channel, byte[] payload) {
    LockNode.Notices to = listener;
    if (to == null || !channel.startsWith(keyPrefix)) {
      return;
    }
    long token;
    try {
      token = Long.parseLong(new String(payload, StandardCharsets.US_ASCII));
    } catch (NumberFormatException e) {
      return; // not ours: a notice is only a hint, and this one says nothing
    }
    try {
      to.released(channel.substring(keyPrefix.length()), token);
    } catch (RuntimeException e) {
      log.warn("a release notice's listener failed on {}", name, e);
    }
  }

  private void refused(JedisDataException e) {
    synchronized (this) {
      if (refusedLogged) {
        return;
      }
      refusedLogged = true;
    }
    log.warn(
        "{} refused to subscribe to release notices ({}); waiters poll instead. Grant the"
            + " channels of the lock keys (ACL &<keyPrefix>*) to be told of releases.",
        name,
        e.getMessage());
  }

  /** A Jedis connection that writes without reading and reads without writing. */
  static final class SubscriberConnection extends Connection {
    SubscriberConnection(HostAndPort address, JedisClientConfig config) {
      super(address, config); // connects, AUTH, SELECT, client name
    }

    void send(Protocol.Command command, List<String> channels) {
      CommandArguments args = new CommandArguments(command);
      channels.forEach(args::add);
      sendCommand(args);
    }

    void flushNow() {
      flush();
    }
  }
}
