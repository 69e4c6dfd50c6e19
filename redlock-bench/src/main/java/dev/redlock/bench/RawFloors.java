package dev.redlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Connection;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.Protocol;

/**
 * The network floor: raw Jedis, no lock logic. {@code SET key token NX PX ttl} on every node, then
 * the owner-checked release by {@code EVALSHA} on every node, in three ways.
 */
final class RawFloors {
  private RawFloors() {}

  static final JedisClientConfig CLIENT =
      DefaultJedisClientConfig.builder()
          .socketTimeoutMillis(2000)
          .clientSetInfoConfig(ClientSetInfoConfig.DISABLED)
          .build();

  /** A Jedis connection whose buffered commands can be flushed without reading a reply. */
  static final class FlushableConnection extends Connection {
    FlushableConnection(HostAndPort node) {
      super(node, CLIENT);
    }

    void flushNow() {
      flush();
    }
  }

  static CommandArguments set(String key) {
    return new CommandArguments(Protocol.Command.SET)
        .key(key)
        .add("token-of-this-cycle")
        .add(Protocol.Keyword.NX)
        .add(Protocol.Keyword.PX)
        .add(30_000);
  }

  static CommandArguments release(String sha, String key) {
    return new CommandArguments(Protocol.Command.EVALSHA)
        .add(sha)
        .add(2)
        .key(key)
        .key(key + FENCE_SUFFIX)
        .add("token-of-this-cycle")
        .add(0) // no fencing token to raise: what a rollback sends, the cheapest release
        .add(60_000);
  }

  private static final String KEY_PREFIX = "redlock:";
  private static final String FENCE_SUFFIX = "@fence";

  /** Writes {@code command} to every node, then reads every reply: one round, on this thread. */
  static List<Object> writeAllThenReadAll(
      List<FlushableConnection> nodes, CommandArguments command) {
    for (FlushableConnection c : nodes) {
      c.sendCommand(command);
      c.flushNow();
    }
    List<Object> replies = new ArrayList<>(nodes.size());
    for (FlushableConnection c : nodes) {
      replies.add(c.getOne());
    }
    return replies;
  }

  static List<FlushableConnection> connect(List<HostAndPort> nodes) {
    List<FlushableConnection> out = new ArrayList<>();
    for (HostAndPort node : nodes) {
      FlushableConnection c = new FlushableConnection(node);
      c.executeCommand(
          new CommandArguments(Protocol.Command.SCRIPT)
              .add("LOAD")
              .add(OurScripts.RELEASE.source()));
      out.add(c);
    }
    return out;
  }

  /** Nodes one after another: write, wait for the reply, next node. */
  static final class Sequential implements LockUnderTest {
    private final List<FlushableConnection> nodes;

    Sequential(List<HostAndPort> nodes) {
      this.nodes = connect(nodes);
    }

    @Override
    public String name() {
      return "floor: sequential";
    }

    @Override
    public void cycle(String key) {
      for (Connection c : nodes) {
        if (c.executeCommand(set(key)) == null) {
          throw new IllegalStateException("not free: " + key);
        }
      }
      for (Connection c : nodes) {
        c.executeCommand(release(OurScripts.RELEASE.sha1(), key));
      }
    }

    @Override
    public void close() {
      nodes.forEach(Connection::close);
    }
  }

  /**
   * One thread writes to every node first, then reads every reply, with this library's scripts
   * (restart guard + SET NX PX + fencing counter, then the owner-checked release): the floor for
   * the same work on the nodes, so the report can tell protocol cost from library overhead.
   */
  static final class PipelinedWithOurScripts implements LockUnderTest {
    private final List<FlushableConnection> nodes;

    private final List<String> runIds = new ArrayList<>();

    PipelinedWithOurScripts(List<HostAndPort> nodes) {
      this.nodes = connect(nodes);
      for (FlushableConnection c : this.nodes) {
        c.executeCommand(
            new CommandArguments(Protocol.Command.SCRIPT)
                .add("LOAD")
                .add(OurScripts.ACQUIRE.source()));
        // The guard's input, read once per connection as the library does.
        String info =
            new String(
                (byte[])
                    c.executeCommand(new CommandArguments(Protocol.Command.INFO).add("server")),
                java.nio.charset.StandardCharsets.UTF_8);
        runIds.add(info.replaceAll("(?s).*run_id:(\\w+).*", "$1"));
      }
    }

    @Override
    public String name() {
      return "floor: write all, then read all, our scripts";
    }

    @Override
    public void cycle(String key) {
      for (int i = 0; i < nodes.size(); i++) {
        nodes
            .get(i)
            .sendCommand(
                new CommandArguments(Protocol.Command.EVALSHA)
                    .add(OurScripts.ACQUIRE.sha1())
                    .add(4)
                    .key(key)
                    .key(KEY_PREFIX + "@life")
                    .key(key + FENCE_SUFFIX)
                    .key(KEY_PREFIX + "@witness")
                    .add("token-of-this-cycle")
                    .add(30_000)
                    .add(60_000)
                    .add("1")
                    .add(runIds.get(i) + ":0:" + KEY_PREFIX) // who the connection reached
                    .add("0")
                    .add(-1)
                    .add("0"));
        nodes.get(i).flushNow();
      }
      for (FlushableConnection c : nodes) {
        if (!(c.getOne() instanceof Long value) || value <= 0) {
          throw new IllegalStateException("not won: " + key);
        }
      }
      writeAllThenReadAll(nodes, release(OurScripts.RELEASE.sha1(), key));
    }

    @Override
    public void close() {
      nodes.forEach(Connection::close);
    }
  }

  /** One thread writes to every node first, then reads every reply: the best a client can do. */
  static final class Pipelined implements LockUnderTest {
    private final List<FlushableConnection> nodes;

    Pipelined(List<HostAndPort> nodes) {
      this.nodes = connect(nodes);
    }

    @Override
    public String name() {
      return "floor: write all, then read all";
    }

    @Override
    public void cycle(String key) {
      for (Object reply : writeAllThenReadAll(nodes, set(key))) {
        if (reply == null) {
          throw new IllegalStateException("not free: " + key);
        }
      }
      writeAllThenReadAll(nodes, release(OurScripts.RELEASE.sha1(), key));
    }

    @Override
    public void close() {
      nodes.forEach(Connection::close);
    }
  }

  /** A thread hand-off per node: what a naive parallel client pays. */
  static final class ExecutorFanOut implements LockUnderTest {
    private final List<FlushableConnection> nodes;
    private final ExecutorService pool;

    ExecutorFanOut(List<HostAndPort> nodes) {
      this.nodes = connect(nodes);
      this.pool = Executors.newFixedThreadPool(nodes.size());
    }

    @Override
    public String name() {
      return "floor: executor fan-out";
    }

    @Override
    public void cycle(String key) throws Exception {
      List<Future<Object>> replies = new ArrayList<>(nodes.size());
      for (Connection c : nodes) {
        replies.add(pool.submit(() -> c.executeCommand(set(key))));
      }
      for (Future<Object> reply : replies) {
        if (reply.get() == null) {
          throw new IllegalStateException("not free: " + key);
        }
      }
      replies.clear();
      for (Connection c : nodes) {
        replies.add(pool.submit(() -> c.executeCommand(release(OurScripts.RELEASE.sha1(), key))));
      }
      for (Future<Object> reply : replies) {
        reply.get();
      }
    }

    @Override
    public void close() {
      pool.shutdownNow();
      nodes.forEach(Connection::close);
    }
  }
}
