package dev.redlock.internal;

import java.time.Duration;
import java.util.List;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPool;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/** A {@link LockNode} over a Jedis connection pool: one pool per node, bounded, no JMX, no evictor thread. */
public final class JedisNode implements LockNode {
  /** The name our connections carry in {@code CLIENT LIST}, so operators can tell them apart. */
  public static final String CLIENT_NAME = "redlock";

  private final NodeUri uri;
  private final ConnectionPool pool;
  private final NodeKeys keys;

  public JedisNode(NodeUri uri, Duration timeout, int maxConnections, NodeKeys keys) {
    this.uri = uri;
    this.keys = keys;
    int millis = (int) timeout.toMillis();
    DefaultJedisClientConfig.Builder client =
        DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis(millis)
            .socketTimeoutMillis(millis)
            .database(uri.database())
            .ssl(uri.tls())
            .clientName(CLIENT_NAME)
            // CLIENT SETINFO is an extra round trip per connection, and Redis 6.2 rejects it.
            .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
    if (uri.password() != null) {
      client.user(uri.user()).password(uri.password());
    }
    GenericObjectPoolConfig<Connection> poolConfig = new GenericObjectPoolConfig<>();
    poolConfig.setMaxTotal(maxConnections);
    poolConfig.setMaxIdle(maxConnections);
    poolConfig.setMinIdle(0);
    // An exhausted pool is a failed vote after a bounded wait, never a hang.
    poolConfig.setBlockWhenExhausted(true);
    poolConfig.setMaxWait(timeout);
    poolConfig.setJmxEnabled(false);
    this.pool = new ConnectionPool(new HostAndPort(uri.host(), uri.port()), client.build(), poolConfig);
  }

  @Override
  public String name() {
    return uri.toString();
  }

  @Override
  public long tryLock(String key, String token, long ttlMillis) {
    Object reply = evaluate(Script.ACQUIRE, List.of(key, keys.epochKey(), keys.fencesKey()),
        token, Long.toString(ttlMillis), keys.maxTtlMillisText(), keys.guardFlag());
    if (!(reply instanceof Long value)) {
      throw new IllegalStateException("unexpected reply to the acquire script: " + reply);
    }
    return value;
  }

  @Override
  public boolean raiseFence(String key, String token, long fence) {
    return isOne(evaluate(Script.RAISE_FENCE, List.of(key, keys.fencesKey()), token, Long.toString(fence)));
  }

  @Override
  public boolean extend(String key, String token, long ttlMillis) {
    return isOne(evaluate(Script.EXTEND, List.of(key), token, Long.toString(ttlMillis)));
  }

  @Override
  public boolean release(String key, String token) {
    return isOne(evaluate(Script.RELEASE, List.of(key), token));
  }

  private Object evaluate(Script script, List<String> keyList, String... args) {
    try {
      return execute(scriptCall(Protocol.Command.EVALSHA, script.sha1(), keyList, args));
    } catch (JedisNoScriptException e) {
      // The node restarted or ran SCRIPT FLUSH: EVAL sends the source and caches it again.
      return execute(scriptCall(Protocol.Command.EVAL, script.source(), keyList, args));
    }
  }

  private static CommandArguments scriptCall(Protocol.Command command, String script, List<String> keyList, String... args) {
    CommandArguments call = new CommandArguments(command).add(script).add(keyList.size());
    for (String key : keyList) {
      call.key(key);
    }
    for (String arg : args) {
      call.add(arg);
    }
    return call;
  }

  private static boolean isOne(Object reply) {
    return reply instanceof Long n && n == 1L;
  }

  private Object execute(CommandArguments command) {
    try (Connection connection = pool.getResource()) {
      return connection.executeCommand(command);
    } catch (JedisConnectionException e) {
      // One broken connection usually means the node restarted or the network dropped: the idle
      // ones are broken too. Drop them now rather than fail one vote per stale connection.
      pool.clear();
      throw e;
    }
  }

  @Override
  public void close() {
    pool.close();
  }

  @Override
  public String toString() {
    return name();
  }
}
