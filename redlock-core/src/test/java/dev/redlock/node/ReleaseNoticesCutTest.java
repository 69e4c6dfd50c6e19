package dev.redlock.node;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
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
  @Test
  void aWriteAfterACutNeverMakesANewSocket() throws Exception {
    try (LocalRedisServer server = LocalRedisServer.start(false)) {
      NodeUri uri = server.uri();
      ReleaseNotices.SubscriberConnection c =
          new ReleaseNotices.SubscriberConnection(
              new HostAndPort("127.0.0.1", server.port),
              uri.clientConfig(Duration.ofSeconds(2), "redlock-notices", null).build());
      c.forceDisconnect(); // what close() does
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
}
