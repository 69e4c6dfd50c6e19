package dev.redlock.it;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNodes;
import java.time.Duration;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import redis.clients.jedis.Jedis;

/** The kit's server stall really stalls the server, on Redis 7 (DEBUG enabled) and 6.2. */
class CallerFaultsKitIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  static Stream<Arguments> binaries() {
    return Stream.of(Arguments.of("redis-7"), Arguments.of("redis-6.2"));
  }

  @ParameterizedTest
  @MethodSource("binaries")
  void aStalledServerAnswersNothingUntilTheStallEnds(String name) {
    Supplier<RedisBinary> binary =
        name.equals("redis-6.2") ? RedisBinary::embedded : RedisBinary::locate;
    RedisNodes nodes = redis.start(RedisFixture.nodes(1).binary(binary));
    try (Jedis jedis = new Jedis("127.0.0.1", nodes.node(0).port(), 5_000)) {
      jedis.ping(); // connected before the stall
      long start = System.nanoTime();
      nodes.node(0).stall(Duration.ofMillis(400));
      // The stall's DEBUG SLEEP is on its own connection: wait until the server has taken it (a
      // PING answered later than 300 ms), bounded by the 5 s socket timeout.
      long tookMillis = 0;
      while (tookMillis < 300 && System.nanoTime() - start < 5_000_000_000L) {
        long before = System.nanoTime();
        jedis.ping();
        tookMillis = (System.nanoTime() - before) / 1_000_000;
      }
      assertTrue(tookMillis >= 300, "a PING waited out the stall: " + tookMillis + " ms");
      assertThrows(IllegalArgumentException.class, () -> nodes.node(0).stall(Duration.ZERO));
    }
  }
}
