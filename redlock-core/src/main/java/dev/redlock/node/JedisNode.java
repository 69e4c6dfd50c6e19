package dev.redlock.node;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import org.apache.commons.pool2.PooledObject;
import org.apache.commons.pool2.PooledObjectFactory;
import org.apache.commons.pool2.impl.DefaultPooledObject;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.DefaultJedisSocketFactory;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisSocketFactory;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.util.IOUtils;
import redis.clients.jedis.util.SafeEncoder;

/**
 * A {@link LockNode} over a Jedis connection pool: one pool per node, bounded, no JMX, no evictor
 * thread. A request borrows a connection, writes and flushes, and gives the connection back when
 * its reply has been read.
 */
final class JedisNode implements LockNode {
  /** The name our connections carry in {@code CLIENT LIST}, so operators can tell them apart. */
  static final String CLIENT_NAME = "redlock";

  private final NodeUri uri;
  private final ConnectionPool pool;
  private final Factory factory;
  private final NodeKeys keys;
  private final Duration borrowWait;
  // Encoded once: they go with every request.
  private final byte[] maxTtlArg;
  private final byte[] guardArg;
  private final byte[] lifeKeyArg;
  private final byte[] legacyEpochKeyArg;
  private static final byte[] EVALSHA = SafeEncoder.encode("EVALSHA");
  private static final byte[] EVAL = SafeEncoder.encode("EVAL");
  private static final byte[] ONE = {'1'};
  private static final byte[] TWO = {'2'};
  private static final byte[] FOUR = {'4'};

  /** The run_id the newest connection read: connections to another process are dropped. */
  private volatile String latestRunId;

  JedisNode(
      NodeUri uri,
      Duration timeout,
      Duration connectTimeout,
      int maxConnections,
      NodeKeys keys,
      javax.net.ssl.SSLSocketFactory tls) {
    this.uri = uri;
    this.keys = keys;
    this.borrowWait = timeout;
    this.maxTtlArg = SafeEncoder.encode(keys.maxTtlMillisText());
    this.guardArg = SafeEncoder.encode(keys.guardFlag());
    this.lifeKeyArg = SafeEncoder.encode(keys.lifeKey());
    this.legacyEpochKeyArg = SafeEncoder.encode(keys.legacyEpochKey());
    DefaultJedisClientConfig.Builder client = uri.clientConfig(timeout, CLIENT_NAME, tls);
    GenericObjectPoolConfig<Connection> poolConfig = new GenericObjectPoolConfig<>();
    poolConfig.setMaxTotal(maxConnections);
    poolConfig.setMaxIdle(maxConnections);
    poolConfig.setMinIdle(0);
    // An exhausted pool is a failed vote after a bounded wait, never a hang.
    poolConfig.setBlockWhenExhausted(true);
    poolConfig.setMaxWait(timeout);
    poolConfig.setJmxEnabled(false);
    this.factory =
        new Factory(
            new HostAndPort(uri.host(), uri.port()),
            client.build(),
            uri.clientConfig(connectTimeout, CLIENT_NAME, tls).build(),
            runId -> latestRunId = runId);
    this.pool = new ConnectionPool(factory, poolConfig);
  }

  @Override
  public String name() {
    return uri.toString();
  }

  /**
   * Makes one pooled connection now, bounded by the connect timeout rather than the node timeout:
   * connections made on demand, by a request, get only the node timeout.
   */
  @Override
  public void open() {
    if (pool.getNumIdle() > 0) {
      return;
    }
    factory.patient.set(Boolean.TRUE);
    try {
      pool.addObject();
      if (pool.isClosed()) {
        pool.clear(); // closed while connecting: the new connection must not outlive the pool
      }
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new JedisConnectionException("could not connect to " + uri, e);
    } finally {
      factory.patient.remove();
    }
  }

  @Override
  public boolean hasIdleConnection() {
    return pool.getNumIdle() > 0;
  }

  @Override
  public int connectionsInUse() {
    return pool.getNumActive();
  }

  @Override
  public Exchange begin(NodeRequest request) {
    FlushableConnection connection = borrowCurrent();
    if (request.verb() == NodeRequest.Verb.ACQUIRE
        && (connection.life.unknown() != null || !connection.life.isOf(latestRunId))) {
      String why =
          connection.life.unknown() != null
              ? connection.life.unknown()
              : "its connections reach more than one process (run_id changed)";
      connection.setBroken(); // dropped: the next connection reads the node again
      connection.close();
      throw new NodeLifeUnknownException(why);
    }
    try {
      connection.send(request.frame(keys, this::encode), connectionArgs(connection, request));
      return new JedisExchange(connection, request);
    } catch (RuntimeException e) {
      connection.setBroken();
      giveBack(connection, e);
      throw e;
    }
  }

  /**
   * Pipelines {@code requests} on one connection: every request is written, then one flush, then
   * the replies are read in order. An error reply fails its own request only (the stream stays in
   * step); a {@code NOSCRIPT} is answered by sending those requests again with their source; a
   * transport failure fails every request not answered yet. Acquisitions, which need the
   * per-connection life check of {@link #begin}, run one by one.
   */
  @Override
  public void runAll(List<NodeRequest> requests, long timeoutNanos, Replies replies) {
    if (requests.stream().anyMatch(r -> r.verb() == NodeRequest.Verb.ACQUIRE)) {
      LockNode.super.runAll(requests, timeoutNanos, replies);
      return;
    }
    int n = requests.size();
    long[] values = new long[n];
    RuntimeException[] errors = new RuntimeException[n];
    boolean[] read = new boolean[n];
    FlushableConnection connection = null;
    boolean inStep = false;
    try {
      connection = borrowCurrent();
      long deadline = System.nanoTime() + timeoutNanos;
      List<Integer> all = new java.util.ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        all.add(i);
      }
      List<Integer> noScript =
          pipeline(connection, requests, all, false, deadline, values, errors, read);
      if (!noScript.isEmpty()) { // the node restarted or ran SCRIPT FLUSH
        pipeline(connection, requests, noScript, true, deadline, values, errors, read);
      }
      inStep = true; // every reply read
    } catch (RuntimeException e) {
      for (int i = 0; i < n; i++) {
        if (!read[i]) {
          errors[i] = e; // not answered: a transport failure, a timeout, no connection
        }
      }
    } finally {
      if (connection != null) {
        if (!inStep) {
          connection.setBroken(); // replies may still come: it must never serve another request
        }
        giveBack(connection, inStep ? null : new JedisConnectionException("pipeline broken"));
      }
    }
    // Reported only now, the connection back: what the callers run cannot leave it out of step.
    for (int i = 0; i < n; i++) {
      if (errors[i] != null) {
        replies.failed(i, errors[i]);
      } else {
        replies.answered(i, values[i]);
      }
    }
  }

  /**
   * Writes the chosen requests, flushes once, reads their replies into {@code values} or {@code
   * errors} (an error reply is complete: the stream stays in step); returns those NOSCRIPT hit.
   * Throws on a transport failure or a timeout.
   */
  private List<Integer> pipeline(
      FlushableConnection connection,
      List<NodeRequest> requests,
      List<Integer> chosen,
      boolean withSource,
      long deadline,
      long[] values,
      RuntimeException[] errors,
      boolean[] read) {
    for (int i : chosen) {
      NodeRequest r = requests.get(i);
      connection.append(
          withSource ? frame(r, true) : r.frame(keys, this::encode), connectionArgs(connection, r));
    }
    connection.writeAppended();
    List<Integer> noScript = new java.util.ArrayList<>(0);
    for (int i : chosen) {
      long left = deadline - System.nanoTime();
      connection.setSoTimeout(
          (int) Math.max(1, Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000)));
      Object reply;
      try {
        reply = connection.getOne();
      } catch (JedisNoScriptException e) {
        if (withSource) {
          errors[i] = e;
          read[i] = true;
        } else {
          noScript.add(i); // sent again with the source: not read yet
        }
        continue;
      } catch (JedisDataException e) {
        errors[i] = e;
        read[i] = true;
        continue;
      }
      read[i] = true;
      try {
        values[i] = toReply(requests.get(i), reply);
      } catch (IllegalStateException e) {
        errors[i] = e; // an unexpected reply: complete all the same, the stream in step
      }
    }
    return noScript;
  }

  /**
   * Borrows a connection to the newest process seen, dropping (a few) pooled ones to an earlier
   * process, or, behind a name that moved, to another server: one node is one process.
   */
  private FlushableConnection borrowCurrent() {
    FlushableConnection connection = borrow();
    for (int stale = 0; stale < 3 && !connection.life.isOf(latestRunId); stale++) {
      connection.setBroken();
      connection.close();
      connection = borrow();
    }
    return connection;
  }

  /**
   * Borrows a connection. An interrupt from before the call does not stop the request (a release
   * from an interrupted thread is still owed; the caller stops at its next wait for replies); one
   * that comes while waiting for a connection ends that wait. Either way the flag is kept.
   */
  private FlushableConnection borrow() {
    boolean interrupted = Thread.interrupted(); // the pool's wait would throw at once
    try {
      FlushableConnection connection = (FlushableConnection) pool.borrowObject(borrowWait);
      connection.setHandlingPool(pool);
      return connection;
    } catch (RuntimeException e) {
      throw e;
    } catch (InterruptedException e) {
      interrupted = true; // the pool's wait took the flag: the caller must still see it
      throw new JedisConnectionException("interrupted while waiting for a connection", e);
    } catch (Exception e) {
      throw new JedisConnectionException("Could not get a resource from the pool", e);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The EVALSHA call of {@code r}, as every node sends it but for the acquire script's
   * per-connection arguments (see {@link #connectionArgs}): made once per request, not per node.
   */
  private NodeRequest.Frame encode(NodeRequest r) {
    return frame(r, false);
  }

  /**
   * {@code r} as EVALSHA, or as EVAL with the script's source ({@code withSource}: the node lost
   * its script cache), without the per-connection arguments.
   */
  private NodeRequest.Frame frame(NodeRequest r, boolean withSource) {
    Script script = scriptOf(r.verb());
    byte[] call = withSource ? EVAL : EVALSHA;
    byte[] body = SafeEncoder.encode(withSource ? script.source() : script.sha1());
    byte[] key = SafeEncoder.encode(r.key());
    byte[] token = SafeEncoder.encode(r.token());
    byte[] argument = Resp.ascii(r.argument());
    byte[][] args =
        switch (r.verb()) {
          case ACQUIRE ->
              new byte[][] {
                call,
                body,
                FOUR,
                key,
                lifeKeyArg,
                SafeEncoder.encode(keys.fenceKeyOfLock(r.key())),
                legacyEpochKeyArg,
                token,
                argument,
                maxTtlArg,
                guardArg
              };
          case RAISE_FENCE, RELEASE ->
              new byte[][] {
                call,
                body,
                TWO,
                key,
                SafeEncoder.encode(keys.fenceKeyOfLock(r.key())),
                token,
                argument,
                maxTtlArg
              };
          case EXTEND -> new byte[][] {call, body, ONE, key, token, argument};
        };
    return new NodeRequest.Frame(keys, Resp.bulks(args), args.length);
  }

  /** What this connection adds to {@code r}'s frame: the acquire script's per-process arguments. */
  private byte[][] connectionArgs(FlushableConnection connection, NodeRequest r) {
    if (r.verb() != NodeRequest.Verb.ACQUIRE) {
      return NO_ARGS;
    }
    if (connection.scriptArgs == null) { // once per connection: they go with every acquire
      connection.scriptArgs = connection.life.scriptArgs(keys.trustDurable());
    }
    return connection.scriptArgs;
  }

  private static final byte[][] NO_ARGS = {};

  private static Script scriptOf(NodeRequest.Verb verb) {
    return switch (verb) {
      case ACQUIRE -> Script.ACQUIRE;
      case RAISE_FENCE -> Script.RAISE_FENCE;
      case EXTEND -> Script.EXTEND;
      case RELEASE -> Script.RELEASE;
    };
  }

  private static long toReply(NodeRequest request, Object reply) {
    if (!(reply instanceof Long value)) {
      throw new IllegalStateException("unexpected reply to " + request.verb() + ": " + reply);
    }
    return value;
  }

  private void giveBack(FlushableConnection connection, RuntimeException failure) {
    if (connection.dropAfterUse) {
      connection.setBroken();
    }
    if (failure instanceof JedisConnectionException) {
      // One broken connection usually means the node restarted or the network dropped: the idle
      // ones are broken too. Drop them now rather than fail one vote per stale connection.
      pool.clear();
    }
    connection.close(); // back to the pool, or destroyed if broken
  }

  /** A request in flight on one borrowed connection. */
  private final class JedisExchange implements Exchange {
    private final FlushableConnection connection;
    private final NodeRequest request;

    JedisExchange(FlushableConnection connection, NodeRequest request) {
      this.connection = connection;
      this.request = request;
    }

    @Override
    public boolean ready() {
      return connection.replyArrived();
    }

    @Override
    public boolean awaitReady(long timeoutNanos) {
      return connection.awaitReply(timeoutNanos);
    }

    @Override
    public long finish(long timeoutNanos) {
      RuntimeException failure = null;
      boolean read = false;
      try {
        connection.setSoTimeout(
            (int) Math.max(1, Math.min(Integer.MAX_VALUE, (timeoutNanos + 999_999) / 1_000_000)));
        Object reply;
        try {
          reply = connection.getOne();
        } catch (JedisNoScriptException e) {
          // The node restarted or ran SCRIPT FLUSH: EVAL sends the source and caches it again.
          connection.send(frame(request, true), connectionArgs(connection, request));
          reply = connection.getOne();
        }
        read = true;
        return toReply(request, reply);
      } catch (RuntimeException e) {
        failure = e;
        throw e;
      } finally {
        if (!read && failure == null) {
          connection.setBroken(); // an Error mid-read: a reply may still come, never pool it
        }
        giveBack(connection, failure);
      }
    }
  }

  /**
   * A Jedis connection that can flush without reading, tell whether a reply has arrived, and knows
   * the life of the process it reached.
   */
  static final class FlushableConnection extends Connection {
    private final CapturingSocketFactory sockets;
    NodeLife life = NodeLife.unknown("not read yet");
    byte[][] scriptArgs; // the acquire script's per-process arguments, encoded on first use
    boolean dropAfterUse; // destroyed, not pooled, once its request is done

    FlushableConnection(CapturingSocketFactory sockets, JedisClientConfig config) {
      super(sockets, config);
      this.sockets = sockets;
    }

    /**
     * Reads, in one round trip, what the restart guard needs to know about the process. A transport
     * failure breaks the connection (thrown); a refused command is part of the answer.
     */
    void readLife() {
      for (String[] command : NodeLife.COMMANDS) {
        CommandArguments args =
            new CommandArguments(
                command[0].equals("INFO") ? Protocol.Command.INFO : Protocol.Command.CONFIG);
        for (int i = 1; i < command.length; i++) {
          args.add(command[i]);
        }
        sendCommand(args);
      }
      flush();
      Object[] replies = new Object[NodeLife.COMMANDS.length];
      for (int i = 0; i < replies.length; i++) {
        replies[i] = replyOrError();
      }
      life = NodeLife.of(replies);
    }

    private Object replyOrError() {
      try {
        return getOne();
      } catch (JedisDataException e) {
        return e; // an error reply (NOPERM, unknown command): the stream is still in step
      }
    }

    private byte[] out = new byte[512]; // this connection's write buffer, reused

    private String socketName() {
      Socket socket = sockets.socket;
      return socket == null ? "the node" : String.valueOf(socket.getRemoteSocketAddress());
    }

    private int appended; // bytes in out not written yet

    /** Writes {@code frame} and {@code extra} now, in one write (see {@link #writeAppended}). */
    void send(NodeRequest.Frame frame, byte[][] extra) {
      append(frame, extra);
      writeAppended();
    }

    /**
     * Adds {@code frame} followed by {@code extra} bulk strings to this connection's write buffer;
     * {@link #writeAppended} writes them, so a pipeline of requests is one write.
     */
    void append(NodeRequest.Frame frame, byte[][] extra) {
      int extraBytes = 0;
      for (byte[] arg : extra) {
        extraBytes += 1 + 11 + 2 + arg.length + 2;
      }
      int size = appended + Resp.MAX_HEADER + frame.bytes().length + extraBytes;
      if (out.length < size) {
        out = java.util.Arrays.copyOf(out, Math.max(size, 2 * out.length));
      }
      int at = Resp.header(out, appended, frame.count() + extra.length);
      System.arraycopy(frame.bytes(), 0, out, at, frame.bytes().length);
      at += frame.bytes().length;
      for (byte[] arg : extra) {
        at = Resp.bulk(out, at, arg);
      }
      appended = at;
    }

    /**
     * Writes what was appended in one write on the socket, past Jedis's own buffer (empty: every
     * Jedis write here is flushed at once); Jedis reads the replies.
     */
    void writeAppended() {
      int length = appended;
      appended = 0;
      Socket socket = sockets.socket;
      if (socket == null || !isConnected()) {
        // Pooled connections are connected and were read (AUTH, SELECT, the node's life); a bare
        // reconnect here would skip all three. Fail instead: the pool makes a new one.
        throw new JedisConnectionException("connection to " + socketName() + " is closed");
      }
      try {
        socket.getOutputStream().write(out, 0, length);
      } catch (IOException e) {
        setBroken();
        throw new JedisConnectionException(e);
      }
    }

    boolean replyArrived() {
      Socket socket = sockets.socket;
      if (socket == null) {
        return false;
      }
      if (socket instanceof WaitableSocket waitable) {
        return waitable.available() > 0;
      }
      try {
        InputStream in = socket.getInputStream();
        return in.available() > 0; // TLS sockets may say 0 too early: then we simply wait for them
      } catch (IOException e) {
        return true; // let the read report the error
      }
    }

    /** Waits, bounded, for the reply to start arriving; true at once for TLS sockets. */
    boolean awaitReply(long timeoutNanos) {
      if (sockets.socket instanceof WaitableSocket waitable) {
        return waitable.awaitReadable(
            (int) Math.min(Integer.MAX_VALUE, Math.max(1, (timeoutNanos + 999_999) / 1_000_000)));
      }
      return true;
    }
  }

  /** Remembers the socket it made, so the connection can look at it. */
  static final class CapturingSocketFactory implements JedisSocketFactory {
    private final DefaultJedisSocketFactory delegate;
    volatile Socket socket;

    CapturingSocketFactory(HostAndPort address, JedisClientConfig config) {
      this.delegate = new DefaultJedisSocketFactory(address, config);
    }

    @Override
    public Socket createSocket() {
      Socket made = delegate.createSocket();
      if (!(made instanceof javax.net.ssl.SSLSocket)) { // TLS records are not read byte by byte
        try {
          made = new WaitableSocket(made);
        } catch (IOException e) {
          IOUtils.closeQuietly(made);
          throw new JedisConnectionException(e);
        }
      }
      socket = made;
      return made;
    }
  }

  /**
   * Makes {@link FlushableConnection}s for the pool; validation is left to use (a failed read
   * breaks one).
   */
  private static final class Factory implements PooledObjectFactory<Connection> {
    private final HostAndPort address;
    private final JedisClientConfig config;
    private final JedisClientConfig patientConfig;
    private final java.util.function.Consumer<String> onRunId;

    /** Set on the thread of {@link JedisNode#open}: its connection may take the connect timeout. */
    final ThreadLocal<Boolean> patient = new ThreadLocal<>();

    /** The sockets of the connection {@link JedisNode#open} is making, so close() can end it. */
    volatile CapturingSocketFactory opening;

    Factory(
        HostAndPort address,
        JedisClientConfig config,
        JedisClientConfig patientConfig,
        java.util.function.Consumer<String> onRunId) {
      this.address = address;
      this.config = config;
      this.patientConfig = patientConfig;
      this.onRunId = onRunId;
    }

    @Override
    public PooledObject<Connection> makeObject() {
      JedisClientConfig chosen = patient.get() != null ? patientConfig : config;
      CapturingSocketFactory sockets = new CapturingSocketFactory(address, chosen);
      if (chosen == patientConfig) {
        opening = sockets;
      }
      FlushableConnection connection = null;
      try {
        connection = new FlushableConnection(sockets, chosen); // connects, AUTH, SELECT, name
        connection.readLife();
      } catch (RuntimeException e) {
        if (connection != null) {
          connection.disconnect();
        }
        throw e;
      } finally {
        if (chosen == patientConfig) {
          opening = null;
        }
      }
      if (connection.life.runId() != null) {
        onRunId.accept(connection.life.runId());
      }
      // Serves one request at most, then goes, so the next connection reads the node again (an
      // error reply may pass, an ACL may be fixed). Not broken now: a broken one cannot read.
      connection.dropAfterUse = connection.life.unknown() != null;
      return new DefaultPooledObject<>(connection);
    }

    @Override
    public void destroyObject(PooledObject<Connection> p) {
      p.getObject().disconnect();
    }

    @Override
    public boolean validateObject(PooledObject<Connection> p) {
      return p.getObject().isConnected() && !p.getObject().isBroken();
    }

    @Override
    public void activateObject(PooledObject<Connection> p) {}

    @Override
    public void passivateObject(PooledObject<Connection> p) {}
  }

  @Override
  public void close() {
    pool.close();
    CapturingSocketFactory opening = factory.opening;
    Socket socket = opening == null ? null : opening.socket;
    if (socket != null) {
      IOUtils.closeQuietly(socket); // an open() still connecting (up to connectTimeout) ends now
    }
  }

  @Override
  public String toString() {
    return name();
  }
}
