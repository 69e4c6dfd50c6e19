package dev.redlock.node;

import dev.redlock.internal.IoThreads;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * One node's release notices: a subscriber connection on which {@code release.lua} publishes a
 * released lease's fencing token on the lock key's channel, so waiters ask again at once instead of
 * after their pause. Only a hint, never a grant: a lost, late or forged one costs an attempt or a
 * pause, nothing else.
 *
 * <p>Two threads per node, made at the first watch: a reader ({@code redlock-io-notices-<node>})
 * that connects and reads, and a writer ({@code redlock-io-notices-w-<node>}) that writes
 * SUBSCRIBE, UNSUBSCRIBE and a PING every {@link #PING_NANOS}. Callers only change or read shared
 * state, never write or wait on a write, so a frozen node (its socket taking no bytes) holds up
 * only the writer. A write stuck, or a PING unanswered, for {@link #STUCK_NANOS} cuts the
 * connection; the reader connects again after {@link #RECONNECT_PAUSE_NANOS} while anything is
 * watched (waiters poll meanwhile). Both threads end with {@link #close}, or when the connection
 * ends with nothing watched.
 */
final class ReleaseNotices {
  private static final Logger log = LoggerFactory.getLogger(ReleaseNotices.class);

  private static final long RECONNECT_PAUSE_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** How often the writer PINGs a quiet connection, so a half-open one is found out. */
  private static final long PING_NANOS = TimeUnit.SECONDS.toNanos(5);

  private static final long STUCK_NANOS = 2 * PING_NANOS;

  private final String name;
  private final HostAndPort address;
  private final JedisClientConfig config;
  private final String keyPrefix;

  /** Watched resources, each with how many lines watch it (a line may go and come back). */
  private final ConcurrentHashMap<String, Integer> wanted = new ConcurrentHashMap<>();

  /** Something to write: a change of {@link #wanted}, or a new connection. */
  private final AtomicBoolean dirty = new AtomicBoolean();

  private volatile LockNode.Notices listener;
  private volatile boolean closed;
  private volatile SubscriberConnection connection; // volatile: close() cuts it without a lock
  private volatile long writingSince; // System.nanoTime() when the writer's write began, 0 if none
  private volatile long lastReadAt; // when the reader last read anything
  private volatile long pingedAt; // when the writer last sent a PING unanswered since, 0 if none
  private volatile boolean refusedLogged;
  private volatile boolean downLogged;

  // Guarded by this (never held while writing, reading or connecting):
  private Thread reader;
  private Thread writer;

  ReleaseNotices(String name, HostAndPort address, JedisClientConfig config, String keyPrefix) {
    this.name = name;
    this.address = address;
    this.config = config;
    this.keyPrefix = keyPrefix;
  }

  void watch(String resource, LockNode.Notices to) {
    listener = to;
    wanted.merge(resource, 1, Integer::sum);
    changed();
    synchronized (this) {
      if (closed || reader != null) {
        return;
      }
      reader = new Thread(this::read, IoThreads.NAME_PREFIX + "notices-" + name);
      writer = new Thread(this::write, IoThreads.NAME_PREFIX + "notices-w-" + name);
      reader.setDaemon(true);
      writer.setDaemon(true);
      reader.start();
      writer.start();
    }
  }

  void unwatch(String resource) {
    wanted.computeIfPresent(resource, (r, lines) -> lines == 1 ? null : lines - 1);
    changed();
  }

  /** Whether a SUBSCRIBE to {@code resource}'s channel was written on the current connection. */
  boolean isSubscribed(String resource) {
    SubscriberConnection c = connection;
    return c != null && c.subscribed.contains(resource);
  }

  /** Ends the connection and both threads; watching afterwards does nothing. */
  void close() {
    closed = true;
    cut(connection); // the reader's blocked read ends, and a blocked write
    synchronized (this) {
      LockSupport.unpark(reader); // resting before a reconnect
      LockSupport.unpark(writer);
    }
  }

  /** Tells the writer there is something to write, and cuts a write stuck on a frozen node. */
  private void changed() {
    dirty.set(true);
    long since = writingSince;
    if (since != 0 && System.nanoTime() - since > STUCK_NANOS) {
      cut(connection);
    }
    LockSupport.unpark(writer);
  }

  private static void cut(SubscriberConnection c) {
    if (c != null) {
      c.cut();
    }
  }

  /** The writer thread: writes what changed, PINGs a quiet connection, cuts a silent one. */
  private void write() {
    while (!closed) {
      SubscriberConnection c = connection;
      if (c != null) {
        long now = System.nanoTime();
        long pinged = pingedAt;
        if (pinged != 0 && lastReadAt - pinged < 0 && now - pinged > STUCK_NANOS) {
          if (!downLogged) {
            downLogged = true;
            log.warn(
                "release notices from {} went silent (no answer to PING); reconnecting, and waiters"
                    + " poll meanwhile",
                name);
          }
          cut(c); // half-open: the reader would wait for hours
        } else if (dirty.getAndSet(false)) {
          if (c == connection) {
            writeChanges(c);
          } else {
            dirty.set(true); // meant for the connection after c (its reader set it): next turn
          }
        } else if (now - lastReadAt > PING_NANOS && (pinged == 0 || lastReadAt - pinged >= 0)) {
          pingedAt = now;
          writing(c, () -> c.send(Protocol.Command.PING, List.of())); // answered: [pong, ""]
        }
      }
      synchronized (this) {
        if (reader == null) {
          writer = null; // the reader ended with nothing watched: so do we
          return;
        }
      }
      if (connection == null || !dirty.get()) {
        LockSupport.parkNanos(this, PING_NANOS); // a change, a connection or close() unparks
      }
    }
  }

  /** Subscribes to what is wanted and not subscribed, and the other way round, in one write. */
  private void writeChanges(SubscriberConnection c) {
    List<String> subscribe = new ArrayList<>();
    List<String> unsubscribe = new ArrayList<>();
    Set<String> subscribed = c.subscribed;
    for (String resource : wanted.keySet()) {
      if (subscribed.add(resource)) {
        subscribe.add(keyPrefix + resource);
      }
    }
    for (String resource : subscribed) {
      if (!wanted.containsKey(resource)) {
        subscribed.remove(resource);
        unsubscribe.add(keyPrefix + resource);
      }
    }
    writing(
        c,
        () -> {
          if (!subscribe.isEmpty()) {
            c.send(Protocol.Command.SUBSCRIBE, subscribe);
          }
          if (!unsubscribe.isEmpty()) {
            c.send(Protocol.Command.UNSUBSCRIBE, unsubscribe);
          }
        });
  }

  private void writing(SubscriberConnection c, Runnable write) {
    writingSince = System.nanoTime() | 1; // never 0 while writing
    try {
      write.run();
      c.flushNow();
    } catch (RuntimeException e) {
      cut(c); // the reader finds out, and connects again while anything is watched
    } finally {
      writingSince = 0;
    }
  }

  /** The reader thread: connects, reads notices until the connection ends, and again if wanted. */
  private void read() {
    for (; ; ) {
      SubscriberConnection c = null;
      try {
        if (closed) {
          return;
        }
        c = SubscriberConnection.open(address, config);
        c.setSoTimeout(0); // a subscriber waits for notices as long as it takes; cut() ends it
        if (closed) {
          return;
        }
        lastReadAt = System.nanoTime();
        pingedAt = 0;
        connection = c;
        if (closed) {
          return; // close() may have missed it
        }
        changed(); // subscribe to everything wanted on this connection
        downLogged = false;
        read(c);
      } catch (RuntimeException e) {
        if (!closed) {
          log.debug("release notices from {} stopped; waiters poll meanwhile", name, e);
        }
      } finally {
        if (connection == c) {
          connection = null;
        }
        cut(c);
      }
      synchronized (this) {
        if (closed || wanted.isEmpty()) {
          reader = null; // a later watch starts another pair
          LockSupport.unpark(writer);
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
        lastReadAt = System.nanoTime();
        refused(e); // a SUBSCRIBE refused (an ACL without channels): the stream is still in step
        continue;
      }
      lastReadAt = System.nanoTime();
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
    if (refusedLogged) {
      return;
    }
    refusedLogged = true;
    log.warn(
        "{} refused to subscribe to release notices ({}); waiters poll instead. Grant the"
            + " channels of the lock keys (ACL &<keyPrefix>*) to be told of releases.",
        name,
        e.getMessage());
  }

  /** A Jedis connection that writes without reading, reads without writing, and stays cut. */
  static final class SubscriberConnection extends Connection {
    private final boolean made; // false only while Jedis's constructor connects

    /**
     * What this connection was sent SUBSCRIBE for (the writer's, read by anyone). Per connection,
     * so a writer late with a change for the one before cannot mark resources subscribed here.
     */
    final Set<String> subscribed = ConcurrentHashMap.newKeySet();

    private final Socket tcp; // under TLS, the TCP socket it runs on (closed first by cut())

    static SubscriberConnection open(HostAndPort address, JedisClientConfig config) {
      return new SubscriberConnection(
          new JedisNode.CapturingSocketFactory(address, config, null), config);
    }

    private SubscriberConnection(
        JedisNode.CapturingSocketFactory sockets, JedisClientConfig config) {
      super(sockets, config); // connects, AUTH, SELECT, client name
      this.tcp = sockets.tcp();
      made = true;
    }

    Socket tcp() {
      return tcp;
    }

    /** Closes the socket at once, from any thread, writing nothing ({@link TcpUnderTls}). */
    void cut() {
      TcpUnderTls.closeFirst(tcp);
      try {
        forceDisconnect();
      } catch (IOException | RuntimeException e) {
        // closing anyway
      }
    }

    /**
     * Jedis makes a new socket on the next write to a closed connection. Not this one: a write just
     * after {@link #cut} would go out on a socket nobody knows of, and to a frozen node block the
     * writer for good; it fails instead, and the reader connects anew. Once made, Jedis's {@code
     * connect()} is never called again: it tests the socket twice, and a cut in between would still
     * make a new one.
     */
    @Override
    public void connect() {
      if (made) {
        if (!isConnected()) {
          throw new JedisConnectionException("the release notices' connection was cut");
        }
        return;
      }
      super.connect();
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
