package dev.redlock.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.IOException;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * A cut subscriber connection stays cut. Jedis makes a new socket on the next write to a connection
 * whose socket was closed; for the release notices' writer that new socket is one {@code close()}
 * never sees: a write that came just after {@code close()} cut the connection went out on a fresh
 * socket to the frozen node and blocked there for good ({@code ReleaseNoticesFreezeTest} failed so
 * once on a fresh machine, most likely so: a notices thread outlived {@code close()}). Planted:
 * without the override of {@code connect()}, the write below reconnects and blocks on the frozen
 * node until the bound runs out (or, on a host whose socket buffers take 8 MB, does not throw).
 */
class ReleaseNoticesCutTest {
  /**
   * A cut closes sockets and writes nothing: it takes milliseconds (5 s: a loaded CI machine; a cut
   * that waits for the frozen node waits until the thaw).
   */
  static final Duration CUT_BOUND = Duration.ofSeconds(5);

  @ParameterizedTest(name = "tls={0}")
  @ValueSource(booleans = {false, true})
  void aWriteAfterACutNeverMakesANewSocket(boolean tls) throws Exception {
    try (LocalRedisServer server = LocalRedisServer.start(tls)) {
      ReleaseNotices.SubscriberConnection c = open(server);
      c.cut(); // what close() does
      server.freeze(); // a new socket would be accepted by the kernel and never read
      try {
        List<String> channels =
            List.of("x".repeat(8 * 1024 * 1024)); // past this host's socket buffers
        assertTimeoutPreemptively(
            Duration.ofSeconds(20),
            () -> {
              assertThrows(
                  JedisConnectionException.class,
                  () -> {
                    c.send(Protocol.Command.SUBSCRIBE, channels);
                    c.flushNow();
                  });
              assertThrows(
                  JedisConnectionException.class, () -> c.send(Protocol.Command.PING, List.of()));
            });
      } finally {
        server.thaw();
      }
    }
  }

  /**
   * A cut ends, at once, a write that is blocked on a frozen node, and does not wait for it; over
   * TLS too (where the JDK skips the close_notify while this write holds the TLS record lock: the
   * next test covers a full queue with no write in progress). Planted: a cut that leaves the socket
   * open times out.
   */
  @ParameterizedTest(name = "tls={0}")
  @ValueSource(booleans = {false, true})
  void aCutEndsAWriteBlockedOnAFrozenNodeAtOnce(boolean tls) throws Exception {
    try (LocalRedisServer server = LocalRedisServer.start(tls)) {
      ReleaseNotices.SubscriberConnection c = open(server);
      c.setSoTimeout(0); // as the reader has it (a TLS close reads what is left only with one)
      assertEquals(tls, c.tcp() != null, "under TLS, the TCP socket is known");
      server.freeze();
      try {
        AtomicReference<Thread> writer = new AtomicReference<>();
        CompletableFuture<Void> write =
            CompletableFuture.runAsync(
                () -> {
                  writer.set(Thread.currentThread());
                  List<String> channel = List.of("x".repeat(64 * 1024));
                  for (; ; ) { // until the frozen node's queue is full, then until the cut
                    c.send(Protocol.Command.SUBSCRIBE, channel);
                    c.flushNow();
                  }
                });
        awaitBlockedInWrite(writer);
        assertTimeoutPreemptively(CUT_BOUND, c::cut);
        Throwable failed =
            assertThrows(ExecutionException.class, () -> write.get(20, TimeUnit.SECONDS))
                .getCause();
        assertInstanceOf(JedisConnectionException.class, failed);
      } finally {
        server.thaw();
        c.cut(); // also when the test failed before it cut
      }
    }
  }

  /**
   * Over TLS, a cut writes nothing, even when the send queue to a frozen node is full and no TLS
   * write is in progress (the window the test above cannot force): the queue is filled with bytes
   * written to the TCP socket itself, from a thread that stays blocked in that write. A TLS close
   * would write a close_notify behind them and wait (found by the review). Planted: without closing
   * the TCP socket first, the cut times out.
   */
  @Test
  void aCutWritesNothingToAFullSendQueue() throws Exception {
    try (LocalRedisServer server = LocalRedisServer.start(true)) {
      ReleaseNotices.SubscriberConnection c = open(server);
      c.setSoTimeout(0);
      server.freeze();
      try {
        AtomicReference<Thread> filler = fillSendQueue(c.tcp());
        assertTimeoutPreemptively(CUT_BOUND, c::cut);
        await().atMost(Duration.ofSeconds(20)).until(() -> !filler.get().isAlive());
      } finally {
        server.thaw();
        c.cut(); // also when the test failed before it cut
      }
    }
  }

  /**
   * Starts a thread that writes to {@code tcp} until the frozen node's queue is full, and returns
   * it once it is blocked there (it ends when the socket is closed).
   */
  static AtomicReference<Thread> fillSendQueue(Socket tcp) {
    AtomicReference<Thread> filler = new AtomicReference<>();
    Thread t =
        new Thread(
            () -> {
              try {
                byte[] chunk = new byte[64 * 1024];
                for (; ; ) { // until the frozen node's queue is full, then until the close
                  tcp.getOutputStream().write(chunk);
                }
              } catch (IOException e) {
                // the cut: expected
              }
            },
            "fill-send-queue");
    t.setDaemon(true);
    filler.set(t);
    t.start();
    awaitBlockedInWrite(filler);
    return filler;
  }

  /** Waits until {@code writer} waits for a frozen node's socket to take bytes it never will. */
  static void awaitBlockedInWrite(AtomicReference<Thread> writer) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              Thread t = writer.get();
              return t != null
                  && Arrays.stream(t.getStackTrace())
                      .anyMatch(
                          f ->
                              f.getClassName().equals("sun.nio.ch.Net")
                                  && f.getMethodName().equals("poll"));
            });
  }

  /** A subscriber connection as the notices' reader makes it (2 s timeouts until then). */
  private static ReleaseNotices.SubscriberConnection open(LocalRedisServer server) {
    return ReleaseNotices.SubscriberConnection.open(
        new HostAndPort("127.0.0.1", server.port),
        server.uri().clientConfig(Duration.ofSeconds(2), "redlock-notices", server.tls).build());
  }
}
