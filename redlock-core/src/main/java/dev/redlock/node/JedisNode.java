package dev.redlock.node;

import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisSocketFactory;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisSocketFactory;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.util.IOUtils;

/**
 * A {@link LockNode} over a few connections every caller shares ({@link SharedConnection}):
 * requests pipelined, replies dispatched in order, no pool. A request's key picks its connection,
 * so one key's requests to a node keep their order on the wire. Jedis makes each connection (TCP,
 * TLS, credentials, database, client name); then the node's life is read on it and its socket
 * carries our requests.
 */
final class JedisNode implements LockNode {
  // The names our connections carry in CLIENT LIST, so operators can tell them apart.
  private static final String CLIENT_NAME = "redlock";
  private static final String NOTICES_CLIENT_NAME = "redlock-notices"; // ReleaseNotices

  private final NodeUri uri;
  private final NodeKeys keys;
  private final HostAndPort address;
  private final JedisClientConfig config;
  private final JedisClientConfig patientConfig;
  private final long timeoutNanos;
  private final Executor drains;
  private final Channel[] channels;
  private final ScriptCalls calls;
  private final ReleaseNotices notices;

  /** The run_id the newest connection read: connections to another process are dropped. */
  private volatile String latestRunId;

  private volatile boolean closed;

  /** Every connection made and not closed yet, retired ones too: close() ends them all. */
  private final java.util.Set<SharedConnection> made =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  /** One of the node's connections: the current one, and the lock held while making a new one. */
  private static final class Channel {
    volatile SharedConnection connection;
    final ReentrantLock connecting = new ReentrantLock();
    volatile Socket opening; // the socket being connected, so close() can end a slow connect
  }

  JedisNode(
      NodeUri uri,
      Duration timeout,
      Duration connectTimeout,
      int connections,
      NodeKeys keys,
      javax.net.ssl.SSLSocketFactory tls,
      Executor drains) {
    this.uri = uri;
    this.keys = keys;
    this.timeoutNanos = timeout.toNanos();
    this.drains = drains;
    this.calls = new ScriptCalls(keys);
    this.address = new HostAndPort(uri.host(), uri.port());
    this.config = uri.clientConfig(timeout, CLIENT_NAME, tls).build();
    this.patientConfig = uri.clientConfig(connectTimeout, CLIENT_NAME, tls).build();
    this.notices =
        new ReleaseNotices(
            uri.toString(),
            address,
            uri.clientConfig(connectTimeout, NOTICES_CLIENT_NAME, tls).build(),
            keys.keyPrefix());
    this.channels = new Channel[connections];
    for (int i = 0; i < connections; i++) {
      channels[i] = new Channel();
    }
  }

  @Override
  public String name() {
    return uri.toString();
  }

  /** Connects with the connect timeout; a connection made on demand gets the node timeout. */
  @Override
  public void open() {
    for (Channel channel : channels) {
      current(channel, true);
    }
  }

  @Override
  public boolean hasIdleConnection() {
    for (Channel channel : channels) {
      SharedConnection c = channel.connection;
      if (c == null || !c.isOpen() || c.life.unknown() != null || !c.life.isOf(latestRunId)) {
        return false;
      }
    }
    return true;
  }

  @Override
  public int requestsInFlight() {
    int inFlight = 0;
    for (SharedConnection c : made) {
      if (c.isClosed()) {
        made.remove(c);
      }
      inFlight += c.inFlight();
    }
    return inFlight;
  }

  @Override
  public Exchange begin(NodeRequest request) {
    Channel channel = channels[channelIndex(request)];
    SharedConnection connection = current(channel, false);
    if (request.verb() == NodeRequest.Verb.ACQUIRE && connection.life.unknown() != null) {
      // The life could not be read when it connected (BUSY, LOADING, INFO refused): read it
      // again on a new connection before this vote, as the old one serves out what it has.
      connection.retire();
      connection = current(channel, false);
    }
    return forAcquire(request, connection).send(request);
  }

  /**
   * {@code connection}, unless {@code request} is an acquisition and the connection cannot vote
   * (its life unknown, or another process than the newest read): then it is retired and the request
   * refused.
   */
  private SharedConnection forAcquire(NodeRequest request, SharedConnection connection) {
    NodeLife life = connection.life;
    if (request.verb() == NodeRequest.Verb.ACQUIRE
        && (life.unknown() != null || !life.isOf(latestRunId))) {
      connection.retire();
      throw new NodeLifeUnknownException(
          life.unknown() != null
              ? life.unknown()
              : "its connections reach more than one process (run_id changed)");
    }
    return connection;
  }

  /**
   * Pipelines {@code requests}: each connection's share in one write, then the replies in order.
   * Acquisitions, which need {@link #begin}'s per-connection life check, run one by one.
   */
  @Override
  public void runAll(List<NodeRequest> requests, long timeoutNanos, Replies replies) {
    if (requests.stream().anyMatch(r -> r.verb() == NodeRequest.Verb.ACQUIRE)) {
      LockNode.super.runAll(requests, timeoutNanos, replies);
      return;
    }
    long deadline = System.nanoTime() + timeoutNanos;
    int n = requests.size();
    Exchange[] sent = new Exchange[n];
    RuntimeException[] errors = new RuntimeException[n];
    for (int c = 0; c < channels.length; c++) {
      List<Integer> mine = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        if (channelIndex(requests.get(i)) == c) {
          mine.add(i);
        }
      }
      if (mine.isEmpty()) {
        continue;
      }
      try {
        SharedConnection connection = current(channels[c], false);
        List<SharedRequest> batch = new ArrayList<>(mine.size());
        for (int i : mine) {
          SharedRequest r = connection.request(requests.get(i));
          batch.add(r);
          sent[i] = r; // read only if sendAll did not throw
        }
        connection.sendAll(batch);
      } catch (RuntimeException e) {
        for (int i : mine) {
          errors[i] = e; // not sent: no connection, or the write failed
        }
      }
    }
    long[] values = new long[n];
    for (int i = 0; i < n; i++) {
      if (errors[i] == null) {
        try {
          values[i] = sent[i].finish(Math.max(1, deadline - System.nanoTime()));
        } catch (RuntimeException e) {
          errors[i] = e;
        }
      }
    }
    // Reported only now: what the callers run cannot hold up the other replies.
    for (int i = 0; i < n; i++) {
      if (errors[i] != null) {
        replies.failed(i, errors[i]);
      } else {
        replies.answered(i, values[i]);
      }
    }
  }

  private int channelIndex(NodeRequest request) {
    return channels.length == 1 ? 0 : Math.floorMod(request.key().hashCode(), channels.length);
  }

  /**
   * The channel's open connection to the newest process seen, made now if there is none (or it
   * broke, or it reaches an earlier process). One thread connects a channel at a time; another
   * waits for it, up to the time a connection may take.
   */
  private SharedConnection current(Channel channel, boolean patient) {
    SharedConnection c = channel.connection;
    if (c != null && c.isOpen() && c.life.isOf(latestRunId)) {
      return c;
    }
    JedisClientConfig chosen = patient ? patientConfig : config;
    boolean locked;
    boolean interrupted = Thread.interrupted(); // a release from an interrupted thread is owed
    try {
      locked =
          channel.connecting.tryLock(
              chosen.getConnectionTimeoutMillis() + (long) chosen.getSocketTimeoutMillis(),
              TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      interrupted = true;
      throw new JedisConnectionException("interrupted while waiting for a connection", e);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
    if (!locked) {
      throw new JedisConnectionException("another thread is still connecting to " + uri);
    }
    try {
      c = channel.connection;
      if (c != null && c.isOpen() && c.life.isOf(latestRunId)) {
        return c; // made by the thread we waited for
      }
      if (c != null) {
        c.retire(); // broken (closed already), or to an earlier process: one node is one process
      }
      if (closed) {
        throw new JedisConnectionException("the Redlock was closed");
      }
      c = connect(channel, chosen);
      made.add(c);
      channel.connection = c;
      if (closed) {
        c.close(); // closed while connecting: the new connection must not outlive the node
      }
      return c;
    } finally {
      channel.connecting.unlock();
    }
  }

  /**
   * One connection failed in transit (the node restarted, the network dropped it): the others with
   * nothing in flight are closed, so the next request connects anew instead of failing its vote on
   * a dead socket (those with requests in flight find out as they read).
   */
  private void retireIdleConnections() {
    for (SharedConnection c : made) {
      if (c.isOpen() && c.inFlight() == 0) {
        c.retire();
      }
    }
  }

  /** Connects, reads the node's life, and hands the socket to a {@link SharedConnection}. */
  private SharedConnection connect(Channel channel, JedisClientConfig chosen) {
    CapturingSocketFactory sockets = new CapturingSocketFactory(address, chosen, channel);
    HandshakeConnection connection = null;
    try {
      connection = new HandshakeConnection(sockets, chosen); // connects, AUTH, SELECT, name
      connection.readLife();
      NodeLife life = connection.life;
      if (life.runId() != null) {
        latestRunId = life.runId();
      }
      return new SharedConnection(
          uri.toString(),
          connection,
          sockets.socket,
          sockets.tcp(),
          life,
          life.unknown() == null ? life.encodedScriptArgs(keys, uri.database()) : null,
          timeoutNanos,
          calls,
          drains,
          this::retireIdleConnections);
    } catch (java.io.IOException | RuntimeException e) {
      if (connection != null) {
        TcpUnderTls.closeFirst(sockets.tcp());
        connection.disconnect();
      }
      throw e instanceof RuntimeException r ? r : new JedisConnectionException(e);
    } finally {
      channel.opening = null;
    }
  }

  /**
   * The Jedis connection that connects, authenticates and reads the node's life in one round trip;
   * then its socket belongs to a {@link SharedConnection}.
   */
  static final class HandshakeConnection extends Connection {
    NodeLife life = NodeLife.unknown("not read yet");

    HandshakeConnection(JedisSocketFactory sockets, JedisClientConfig config) {
      super(sockets, config);
    }

    void readLife() {
      life = NodeLife.read(this);
    }
  }

  /** Remembers the socket it made (and the TCP one under TLS), to hand on or close mid-connect. */
  static final class CapturingSocketFactory implements JedisSocketFactory {
    private final DefaultJedisSocketFactory delegate;
    private final Channel channel; // null: nobody to tell (the release notices, tests)
    private final TcpUnderTls under; // null: plain TCP
    volatile Socket socket;

    CapturingSocketFactory(HostAndPort address, JedisClientConfig config, Channel channel) {
      this.under = TcpUnderTls.of(config);
      this.delegate = new DefaultJedisSocketFactory(address, TcpUnderTls.config(config, under));
      this.channel = channel;
    }

    @Override
    public Socket createSocket() {
      Socket made = delegate.createSocket();
      socket = made;
      Socket tcp = tcp();
      if (channel != null) {
        channel.opening = tcp != null ? tcp : made;
      }
      return made;
    }

    Socket tcp() {
      return TcpUnderTls.socket(under);
    }
  }

  @Override
  public void watchReleases(String resource, Notices to) {
    notices.watch(resource, to);
  }

  @Override
  public void unwatchReleases(String resource) {
    notices.unwatch(resource);
  }

  @Override
  public boolean watches(String resource) {
    return notices.isSubscribed(resource);
  }

  /** Every connection made and not closed yet (for tests). */
  java.util.Collection<SharedConnection> connectionsMade() {
    return java.util.Collections.unmodifiableSet(made);
  }

  @Override
  public void close() {
    closed = true;
    notices.close();
    for (Channel channel : channels) {
      Socket opening = channel.opening;
      if (opening != null) {
        IOUtils.closeQuietly(opening); // mid-handshake; under TLS the TCP socket: writes nothing
      }
    }
    for (SharedConnection c : made) {
      c.close(); // current and retired ones: what is in flight fails
      made.remove(c);
    }
  }

  @Override
  public String toString() {
    return name();
  }
}
