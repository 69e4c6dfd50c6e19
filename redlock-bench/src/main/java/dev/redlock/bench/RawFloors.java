package dev.redlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
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
 * The network floor: raw Jedis, no lock logic. {@code SET key token NX PX ttl} on every node (or a
 * script: fenced, or ours), then the owner-checked release by {@code EVALSHA} on every node.
 */
final class RawFloors {
  private RawFloors() {}

  /** A node's address, from its {@code redis://host:port} URI. */
  static HostAndPort host(String uri) {
    return HostAndPort.from(uri.substring("redis://".length()));
  }

  static List<HostAndPort> hosts(List<String> uris) {
    return uris.stream().map(RawFloors::host).toList();
  }

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

  /**
   * The fenced floor's acquire, one script per node: {@code SET NX PX}, then {@code INCR} of the
   * resource's fencing counter, so the token comes from the node; no restart guard, no clock.
   * Returns the token, or 0 if the key is held.
   */
  static final OurScripts.Lua FENCED_SET =
      OurScripts.lua(
          """
          if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
            return 0
          end
          return redis.call('INCR', KEYS[2])
          """);

  static CommandArguments fencedSet(String key) {
    return new CommandArguments(Protocol.Command.EVALSHA)
        .add(FENCED_SET.sha1())
        .add(2)
        .key(key)
        .key(key + FENCE_SUFFIX)
        .add("token-of-this-cycle")
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

  /** A connection to every node, each with the release script and {@code scripts} loaded. */
  static List<FlushableConnection> connect(List<HostAndPort> nodes, OurScripts.Lua... scripts) {
    List<FlushableConnection> out = new ArrayList<>();
    for (HostAndPort node : nodes) {
      FlushableConnection c = new FlushableConnection(node);
      c.executeCommand(
          new CommandArguments(Protocol.Command.SCRIPT)
              .add("LOAD")
              .add(OurScripts.RELEASE.source()));
      for (OurScripts.Lua script : scripts) {
        c.executeCommand(
            new CommandArguments(Protocol.Command.SCRIPT).add("LOAD").add(script.source()));
      }
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
      this.nodes = connect(nodes, OurScripts.ACQUIRE);
      for (FlushableConnection c : this.nodes) {
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
      cycles(List.of(key));
    }

    /**
     * An acquire + release of each of {@code keys}: every acquire written to every node, then every
     * reply read; then the releases likewise. One round trip per phase, however many keys.
     */
    void cycles(List<String> keys) {
      for (int i = 0; i < nodes.size(); i++) {
        for (int k = 0; k < keys.size(); k++) {
          nodes
              .get(i)
              .sendCommand(
                  new CommandArguments(Protocol.Command.EVALSHA)
                      .add(OurScripts.ACQUIRE.sha1())
                      .add(4)
                      .key(keys.get(k))
                      .key(KEY_PREFIX + "@life")
                      .key(keys.get(k) + FENCE_SUFFIX)
                      .key(KEY_PREFIX + "@witness")
                      .add("token-of-this-cycle")
                      .add(30_000)
                      .add(60_000)
                      .add("1")
                      .add(runIds.get(i) + ":0:" + KEY_PREFIX) // who the connection reached
                      .add("0")
                      .add(-1)
                      .add("0"));
        }
        nodes.get(i).flushNow();
      }
      for (FlushableConnection c : nodes) {
        for (int k = 0; k < keys.size(); k++) {
          if (!(c.getOne() instanceof Long value) || value <= 0) {
            throw new IllegalStateException("not won: " + keys.get(k));
          }
        }
      }
      List<CommandArguments> releases = new ArrayList<>(keys.size());
      for (int k = 0; k < keys.size(); k++) {
        releases.add(release(OurScripts.RELEASE.sha1(), keys.get(k)));
      }
      for (FlushableConnection c : nodes) {
        for (int k = 0; k < keys.size(); k++) {
          c.sendCommand(releases.get(k));
        }
        c.flushNow();
      }
      for (FlushableConnection c : nodes) {
        for (int k = 0; k < keys.size(); k++) {
          c.getOne();
        }
      }
    }

    @Override
    public void close() {
      nodes.forEach(Connection::close);
    }
  }

  /**
   * One thread writes to every node first, then reads every reply: the best a client can do. Bare
   * ({@code SET NX PX}), or fenced ({@link #FENCED_SET}: each node's reply a fencing token).
   */
  static final class Pipelined implements LockUnderTest {
    private final List<FlushableConnection> nodes;
    private final boolean fenced;

    Pipelined(List<HostAndPort> nodes) {
      this(nodes, false);
    }

    Pipelined(List<HostAndPort> nodes, boolean fenced) {
      this.nodes = connect(nodes, FENCED_SET);
      this.fenced = fenced;
    }

    @Override
    public String name() {
      return fenced ? "floor: fenced, write all, then read all" : "floor: write all, then read all";
    }

    @Override
    public void cycle(String key) {
      for (Object reply : writeAllThenReadAll(nodes, fenced ? fencedSet(key) : set(key))) {
        if (fenced ? !(reply instanceof Long token) || token <= 0 : reply == null) {
          throw new IllegalStateException("not free, or no fencing token: " + key);
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

  /**
   * The throughput floor for many threads on distinct keys: {@link PipelinedWithOurScripts}'s
   * scripts from the caller's threads over {@code perNode} connections to each node, a key's cycle
   * on the connections its hash picks (the library picks a connection by key too). A thread queues
   * its cycle there, then takes their lock; whoever holds it sends every cycle queued as one batch
   * (each phase one write and one read per node) and the cycles it carried are done.
   *
   * <p>Why it is a fair floor: the nodes do the same work per cycle (the same acquire and release
   * scripts), over as many connections as the library opens by default, for as many threads on the
   * same cores; no more sockets, no thread of its own. What it leaves out is the library's: the
   * quorum count, the validity clock, the lease and its token, its bookkeeping per request. And a
   * batch per connection is the fewest writes and reads a client sharing its connections can make,
   * where the library pipelines every caller's requests on its connections as they come.
   */
  static final class SharedConnections implements LockUnderTest {
    /** One set of connections, one to each node, and the cycles waiting for it. */
    private static final class Lane {
      final PipelinedWithOurScripts connections;
      final Queue<Waiting> waiting = new ConcurrentLinkedQueue<>();

      Lane(List<HostAndPort> nodes) {
        this.connections = new PipelinedWithOurScripts(nodes);
      }
    }

    /** A queued cycle; {@code done} is read and written under its lane's lock only. */
    private static final class Waiting {
      final String key;
      boolean done;

      Waiting(String key) {
        this.key = key;
      }
    }

    private final List<Lane> lanes = new ArrayList<>();

    SharedConnections(List<HostAndPort> nodes, int perNode) {
      for (int i = 0; i < perNode; i++) {
        lanes.add(new Lane(nodes));
      }
    }

    @Override
    public String name() {
      return "floor: our scripts, " + lanes.size() + " connections per node, batched";
    }

    @Override
    public void cycle(String key) {
      Lane lane = lanes.get(Math.floorMod(key.hashCode(), lanes.size()));
      Waiting mine = new Waiting(key);
      lane.waiting.add(mine);
      synchronized (lane) {
        if (mine.done) {
          return; // carried by the batch of a thread ahead of this one
        }
        List<Waiting> batch = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (Waiting w; (w = lane.waiting.poll()) != null; ) {
          batch.add(w);
          keys.add(w.key);
        }
        lane.connections.cycles(keys); // mine among them: queued before this lock was taken
        batch.forEach(w -> w.done = true);
      }
    }

    @Override
    public void close() {
      lanes.forEach(lane -> lane.connections.close());
    }
  }
}
