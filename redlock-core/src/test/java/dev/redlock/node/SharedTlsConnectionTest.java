package dev.redlock.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * One shared TLS connection, two callers (review finding 2.2 of issue 15's shared connections): one
 * caller's short deadline must not break the connection for the other, whose reply comes well
 * within its node timeout. Over TLS a timed-out read may leave the stream unusable, so callers
 * never read there: a drain does, bounded by the connection's own silence. On a real TLS {@code
 * redis-server} (the whole contract over TLS runs in the kit's ThreeNodesTlsIT).
 */
class SharedTlsConnectionTest {
  @Test
  void oneCallersShortDeadlineDoesNotBreakTheConnectionForAnother() throws Exception {
    ExecutorService io = Executors.newCachedThreadPool();
    try (LocalRedisServer server = LocalRedisServer.start(true);
        Jedis admin = server.admin()) {
      LockNode node = connect(server, io);
      try {
        node.open();
        assertEquals(
            0,
            node.begin(new NodeRequest(NodeRequest.Verb.EXTEND, "redlock:warm", "t", 5000))
                .finish(TimeUnit.SECONDS.toNanos(1)));
        admin.clientPause(150); // busy 150 ms: well within the 1 s node timeout
        Exchange patient =
            node.begin(new NodeRequest(NodeRequest.Verb.EXTEND, "redlock:b", "t", 5000));
        Exchange hurried =
            node.begin(new NodeRequest(NodeRequest.Verb.EXTEND, "redlock:a", "t", 5000));
        assertThrows(
            RuntimeException.class, () -> hurried.finish(TimeUnit.MILLISECONDS.toNanos(10)));
        assertEquals(
            0,
            patient.finish(TimeUnit.SECONDS.toNanos(1)),
            "the patient caller's reply (not the owner: 0), not a broken connection");
      } finally {
        node.close();
      }
    } finally {
      io.shutdownNow();
    }
  }

  /**
   * Breaking a TLS connection writes nothing, even when the send queue to a frozen node is full: a
   * caller that finds a node silent breaks its connection, and {@code close()} breaks them all;
   * neither may then wait on that node (the TLS close's close_notify would wait behind the full
   * queue; found by a review of the release notices' same gap). The node makes its connection as
   * always; the queue is filled through the TCP socket under TLS by a thread that stays blocked
   * there, so no TLS write is in progress. Planted: without closing the TCP socket first, {@code
   * close()} times out.
   */
  @Test
  void breakingWritesNothingToAFullSendQueue() throws Exception {
    ExecutorService io = Executors.newCachedThreadPool();
    try (LocalRedisServer server = LocalRedisServer.start(true)) {
      JedisNode node = connect(server, io);
      try {
        node.open();
        SharedConnection made = node.connectionsMade().iterator().next();
        Socket tcp = made.tcp();
        assertNotNull(tcp, "under TLS, the node hands the TCP socket to its connection");
        server.freeze();
        try {
          AtomicReference<Thread> filler = ReleaseNoticesCutTest.fillSendQueue(tcp);
          assertTimeoutPreemptively(ReleaseNoticesCutTest.CUT_BOUND, node::close);
          assertTrue(made.isClosed());
          await().atMost(Duration.ofSeconds(20)).until(() -> !filler.get().isAlive());
        } finally {
          server.thaw();
        }
      } finally {
        node.close();
      }
    } finally {
      io.shutdownNow();
    }
  }

  /** The node as the service connects it: a 1 s node timeout, one connection. */
  private static JedisNode connect(LocalRedisServer server, ExecutorService io) {
    return (JedisNode)
        LockNode.connect(
            server.uri(),
            Duration.ofSeconds(1),
            Duration.ofSeconds(2),
            1,
            NodeKeys.of("redlock:", 60_000, false),
            server.tls,
            io);
  }
}
