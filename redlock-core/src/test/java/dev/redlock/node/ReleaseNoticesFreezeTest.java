package dev.redlock.node;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.HostAndPort;

/**
 * A frozen node holds up nobody but its notices' own writer (review finding: a write blocked on a
 * full socket held the lock that {@code watch} and {@code close} take, and an I/O thread per
 * change). The node is frozen with SIGSTOP once subscribed, then tens of megabytes of SUBSCRIBE are
 * asked for, far past what its socket takes: every call must return at once, and {@code close()}
 * must end both threads. Planted: writing the changes under the monitor that {@code watch} takes
 * blocks {@code watch} until the timeout.
 */
class ReleaseNoticesFreezeTest {
  private static final Duration BOUND = Duration.ofSeconds(20);

  @ParameterizedTest(name = "tls={0}")
  @ValueSource(booleans = {false, true})
  void aFrozenNodeHoldsUpNoCallerAndCloseEndsBothThreads(boolean tls) throws Exception {
    try (LocalRedisServer server = LocalRedisServer.start(tls)) {
      NodeUri uri = server.uri();
      ReleaseNotices notices =
          new ReleaseNotices(
              uri.toString(),
              new HostAndPort("127.0.0.1", server.port),
              uri.clientConfig(Duration.ofSeconds(2), "redlock-notices", server.tls).build(),
              "redlock:");
      LockNode.Notices nobody = (resource, token) -> {};
      notices.watch("first", nobody);
      await().atMost(BOUND).until(() -> notices.isSubscribed("first"));
      server.freeze();
      try {
        String big = "x".repeat(64 * 1024);
        assertTimeoutPreemptively(
            BOUND,
            () -> {
              for (int i = 0; i < 400; i++) { // 25 MB of channel names
                notices.watch(big + i, nobody);
              }
              for (int i = 0; i < 400; i++) {
                notices.unwatch(big + i);
              }
              notices.isSubscribed("first");
              notices.close();
            });
        await()
            .atMost(BOUND)
            .until(
                () ->
                    Thread.getAllStackTraces().keySet().stream()
                        .noneMatch(
                            t ->
                                t.getName().startsWith("redlock-io-notices-")
                                    && t.getName().endsWith(":" + server.port)));
        assertFalse(notices.isSubscribed("first"), "closed");
      } finally {
        server.thaw();
      }
    }
  }
}
