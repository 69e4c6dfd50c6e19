package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * Releases a node did not confirm are sent again; one the node answers with a lasting error must
 * not hold up the ones queued behind it (issue 13, item 5).
 */
class StragglerReleasesIT extends RealNodesTest {
  StragglerReleasesIT() {
    super(RedisFixture.nodes(3));
  }

  static final Duration TTL = Duration.ofSeconds(30); // far longer than the test waits

  @Test
  void aReleaseAnsweredWithAnErrorDoesNotBlockTheReleasesBehindIt() throws Exception {
    Redlock redlock = client(config().maxTtl(TTL).build());
    Lease x = redlock.acquire(resource() + ":x", TTL, NO_HANG);
    Lease y = redlock.acquire(resource() + ":y", TTL, NO_HANG);
    RedisNode zero = nodes.node(0);
    String keyX = RedlockConfig.DEFAULT_KEY_PREFIX + resource() + ":x";
    String keyY = RedlockConfig.DEFAULT_KEY_PREFIX + resource() + ":y";
    try (Jedis jedis = Admin.on(zero)) {
      jedis.del(keyX);
      jedis.hset(keyX, "not", "a lock"); // every release of x on node 0: WRONGTYPE, for good
    }
    x.release(); // node 0 errs: kept to be sent again
    Thread busy = Admin.busyScript(zero);
    try {
      y.release(); // node 0 answers BUSY: kept too, behind x
    } finally {
      Admin.killScript(zero);
      busy.join(10_000);
    }
    assertNotNull(Admin.get(zero, keyY), "node 0 still holds y: only a re-sent release frees it");
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> Admin.get(zero, keyY) == null);
  }
}
