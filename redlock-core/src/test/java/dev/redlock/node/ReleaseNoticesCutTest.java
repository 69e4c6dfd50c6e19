package dev.redlock.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
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
  @ParameterizedTest(name = "tls={0}")
  @ValueSource(booleans = {false, true})
  void aWriteAfterACutNeverMakesANewSocket(boolean tls) throws Exception {
    try (LocalRedisServer server = LocalRedisServer.start(tls)) {
      NodeUri uri = server.uri();
      ReleaseNotices.SubscriberConnection c =
          ReleaseNotices.SubscriberConnection.open(
              new HostAndPort("127.0.0.1", server.port),
              uri.clientConfig(Duration.ofSeconds(2), "redlock-notices", server.tls).build());
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
              assertThrows(JedisConnectionException.class, c::sendPing);
            });
      } finally {
        server.thaw();
      }
    }
  }

  /**
   * A cut ends, at once, a write that is blocked on a frozen node, and does not wait for it; over
   * TLS too. Closing a TLS socket first writes a close_notify: Jedis's SO_LINGER of 0 has the JDK
   * skip it while a write holds the TLS record lock (as here), but with no write in progress and
   * the send queue to a frozen node full, that write would block whoever cuts; so the cut closes
   * the TCP socket under the TLS one first (that window could not be forced here: without the TCP
   * close this test still passes on JDK 17). Planted: a cut that leaves the socket open times out.
   */
  @ParameterizedTest(name = "tls={0}")
  @ValueSource(booleans = {false, true})
  void aCutEndsAWriteBlockedOnAFrozenNodeAtOnce(boolean tls) throws Exception {
    try (LocalRedisServer server = LocalRedisServer.start(tls)) {
      NodeUri uri = server.uri();
      ReleaseNotices.SubscriberConnection c =
          ReleaseNotices.SubscriberConnection.open(
              new HostAndPort("127.0.0.1", server.port),
              uri.clientConfig(Duration.ofSeconds(2), "redlock-notices", server.tls).build());
      c.setSoTimeout(0); // as the reader has it (a TLS close reads what is left only with one)
      server.freeze();
      try {
        Thread[] writer = new Thread[1];
        CompletableFuture<Void> write =
            CompletableFuture.runAsync(
                () -> {
                  writer[0] = Thread.currentThread();
                  c.send(Protocol.Command.SUBSCRIBE, List.of("x".repeat(32 * 1024 * 1024)));
                  c.flushNow();
                });
        // Blocked: waiting for the frozen node's socket to take bytes it never will.
        await()
            .atMost(Duration.ofSeconds(20))
            .until(
                () ->
                    writer[0] != null
                        && Arrays.stream(writer[0].getStackTrace())
                            .anyMatch(
                                f ->
                                    f.getClassName().equals("sun.nio.ch.Net")
                                        && f.getMethodName().equals("poll")));
        assertTimeoutPreemptively(Duration.ofSeconds(20), c::cut);
        Throwable failed =
            assertThrows(ExecutionException.class, () -> write.get(20, TimeUnit.SECONDS))
                .getCause();
        assertInstanceOf(JedisConnectionException.class, failed);
      } finally {
        server.thaw();
      }
    }
  }
}
