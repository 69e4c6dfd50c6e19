package dev.redlock.quorum;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.node.DelayingProxy;
import dev.redlock.node.LocalRedisServer;
import dev.redlock.node.LockNode;
import dev.redlock.node.NodeKeys;
import dev.redlock.node.NodeRequest;
import dev.redlock.node.NodeUri;
import dev.redlock.timing.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A ballot's caller keeps its own deadline when a node's reply has started to come and stalls (the
 * rest of a TCP segment lost and sent again, say): neither the reads of what has arrived nor the
 * hand-off after the decision wait for the rest. One node direct, one behind a proxy that holds
 * back all but a reply's first byte for 4 s; the node timeout is 10 s, the caller's bound 200 ms.
 */
class ReplyDeadlineTest {
  private static final long BOUND_MILLIS = 1500; // far above 200 ms, far below the 4 s stall

  @Test
  void aStalledReplyHoldsNoCallerPastItsDeadline() throws Exception {
    LocalRedisServer redis = LocalRedisServer.start(false);
    ExecutorService io = Executors.newCachedThreadPool();
    List<LockNode> nodes = new ArrayList<>();
    try (DelayingProxy proxy = new DelayingProxy(redis.port)) {
      nodes.add(node(redis.port, io)); // 0: direct
      nodes.add(node(proxy.server.getLocalPort(), io)); // 1: stalls after a reply's first byte
      FanOut fanOut =
          new FanOut(
              nodes,
              io,
              Ticker.SYSTEM,
              TimeUnit.SECONDS.toNanos(10),
              new NodeStates(nodes.size(), 1, Duration.ofMinutes(1)));
      proxy.firstGapMillis = 4000;
      proxy.slow = true;
      // Only node 1: the caller reads what has arrived once the reply's first byte is in.
      int before = proxy.started.get();
      Ballot one = fanOut.send(extend(), "no", null, i -> i == 0);
      await().atMost(Duration.ofSeconds(5)).until(() -> proxy.started.get() > before);
      long t0 = System.nanoTime();
      one.awaitQuorum(1, Ticker.SYSTEM.read() + TimeUnit.MILLISECONDS.toNanos(200));
      assertWithinBound(t0, "reading what had arrived");
      await().atMost(Duration.ofSeconds(10)).until(() -> proxy.finished.get() > before);
      // Both: node 0 decides at once; node 1's started reply is handed off, not waited for.
      int next = proxy.started.get();
      Ballot both = fanOut.send(extend(), "no", null, null);
      await().atMost(Duration.ofSeconds(5)).until(() -> proxy.started.get() > next);
      t0 = System.nanoTime();
      both.awaitDefinite(1, Ticker.SYSTEM.read() + TimeUnit.MILLISECONDS.toNanos(200));
      assertWithinBound(t0, "the hand-off after the decision");
      fanOut.close();
    } finally {
      nodes.forEach(LockNode::close);
      io.shutdownNow();
      redis.close();
    }
  }

  private static NodeRequest extend() {
    return new NodeRequest(NodeRequest.Verb.EXTEND, "redlock:none", "t", 30_000);
  }

  private static void assertWithinBound(long t0, String what) {
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(ms < BOUND_MILLIS, what + " held the caller " + ms + " ms");
  }

  private static LockNode node(int port, ExecutorService io) {
    LockNode n =
        LockNode.connect(
            NodeUri.parse("redis://127.0.0.1:" + port),
            Duration.ofSeconds(10),
            Duration.ofSeconds(2),
            1,
            NodeKeys.of("redlock:", 60_000, true),
            null,
            io);
    n.open();
    n.begin(extend()).finish(2_000_000_000L);
    return n;
  }
}
