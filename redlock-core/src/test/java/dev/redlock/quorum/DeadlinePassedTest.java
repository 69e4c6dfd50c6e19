package dev.redlock.quorum;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redlock.internal.Ticker;
import dev.redlock.node.Exchange;
import dev.redlock.node.LocalRedisServer;
import dev.redlock.node.LockNode;
import dev.redlock.node.NodeKeys;
import dev.redlock.node.NodeRequest;
import dev.redlock.node.NodeUri;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * A caller kept off the CPU past its vote's deadline (a collection, a throttled container, a loaded
 * machine) while every node answered: the replies are in the sockets, its own queued behind another
 * caller's reply that nobody has read yet (the connections are shared). They must still count: the
 * lease's validity runs from the attempt's start, so a late verdict only leaves less of it. Seen in
 * the bench before the fix: "won 0 of 5 nodes (quorum 3) in 86.2 ms (5 more said yes after the
 * decision, rolled back)", each node's reply in within 21 ms.
 *
 * <p>Three real {@code redis-server}s (started here, stopped by their PIDs; the test fails under
 * {@code CI=true} without one, and is skipped on a laptop), one shared connection to each.
 */
class DeadlinePassedTest {
  private static final long NODE_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(2);
  private static final List<LocalRedisServer> servers = new ArrayList<>();

  @BeforeAll
  static void startRedis() throws Exception {
    for (int i = 0; i < 3; i++) {
      servers.add(LocalRedisServer.start(false));
    }
  }

  @AfterAll
  static void stopRedis() {
    servers.forEach(LocalRedisServer::close);
  }

  @Test
  void repliesThatCameBeforeALateReaderLookedStillCount() throws Exception {
    ExecutorService io = Executors.newCachedThreadPool();
    // The I/O threads are as starved as the caller: whatever they are handed waits until the
    // verdict, so nothing but the caller's own reads can count (then they run, and read the rest).
    List<Runnable> starved = new ArrayList<>();
    java.util.concurrent.Executor drains =
        task -> {
          synchronized (starved) {
            starved.add(task);
          }
        };
    List<LockNode> nodes = new ArrayList<>();
    List<Exchange> ahead = new ArrayList<>();
    FanOut fanOut = null;
    try {
      for (LocalRedisServer server : servers) {
        LockNode node =
            LockNode.connect(
                NodeUri.parse("redis://127.0.0.1:" + server.port),
                Duration.ofNanos(NODE_TIMEOUT_NANOS),
                Duration.ofSeconds(2),
                1, // one connection: every request shares it
                NodeKeys.of("redlock:", 60_000, true),
                null,
                drains);
        node.open();
        // One acquisition read to the end first: the node caches the script (a first EVALSHA is
        // answered NOSCRIPT, and only a reader sends the source), as on any node in use.
        node.begin(new NodeRequest(NodeRequest.Verb.ACQUIRE, "redlock:warm", "t-warm", 10_000))
            .finish(NODE_TIMEOUT_NANOS);
        nodes.add(node);
      }
      // Another caller's request on each connection, whose caller is not reading: ours queue
      // behind it, so none of ours is first in line when our thread comes back.
      for (LockNode node : nodes) {
        ahead.add(
            node.begin(
                new NodeRequest(NodeRequest.Verb.ACQUIRE, "redlock:another", "t-other", 10_000)));
      }
      fanOut = new FanOut(nodes, io, Ticker.SYSTEM, NODE_TIMEOUT_NANOS);
      Ballot votes =
          fanOut.send(
              new NodeRequest(NodeRequest.Verb.ACQUIRE, "redlock:mine", "t-mine", 10_000),
              "held by another owner",
              null,
              null);
      // Every node has run our SET (and so written its reply) while this thread "was away".
      await("every node ran our SET")
          .atMost(Duration.ofSeconds(10))
          .until(() -> servers.stream().allMatch(s -> holds(s, "redlock:mine", "t-mine")));

      // Back on the CPU, past the deadline: all three are needed, and all three said yes.
      int yes = votes.awaitQuorum(3, Ticker.SYSTEM.read() - 1);

      assertEquals(
          3,
          yes,
          () -> "every node said yes before the verdict, yet it counted " + votes.outcomes());
    } finally {
      synchronized (starved) {
        starved.forEach(io::execute);
      }
      for (Exchange e : ahead) {
        try {
          e.finish(NODE_TIMEOUT_NANOS); // every reply read: nothing left in flight
        } catch (RuntimeException ignored) {
          // a broken connection: nothing in flight either
        }
      }
      if (fanOut != null) {
        fanOut.close();
      }
      for (LockNode node : nodes) {
        node.close();
      }
      io.shutdownNow();
    }
  }

  private static boolean holds(LocalRedisServer server, String key, String token) {
    try (Jedis admin = new Jedis("127.0.0.1", server.port)) {
      return token.equals(admin.get(key));
    }
  }
}
