package dev.redlock.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.Jedis;

/**
 * The fixture keeps its promises: what a test leaves (faults, keys, clients, nodes it started) is
 * gone before the next one, which finds the class's nodes running, empty and vouched for.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisFixtureIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(2));

  static final String LIFE = RedlockConfig.DEFAULT_KEY_PREFIX + "@life";

  /** What the first test left, for the second to look at. */
  static Redlock leftClient;

  static final List<ProcessHandle> leftProcesses = new ArrayList<>();

  static Jedis on(RedisNode node) {
    return new Jedis("127.0.0.1", node.port(), 2000);
  }

  @Test
  @Order(1)
  void aTestLeavesKeysFaultsAClientAndNodesOfItsOwn() {
    RedisNodes nodes = redis.nodes();
    try (Jedis jedis = on(nodes.node(0))) {
      jedis.set("left", "1");
    }
    nodes.node(0).kill();
    nodes.node(1).pause();
    leftClient = redis.client(redis.config().nodeTimeout(Duration.ofMillis(200)).build());
    RedisNodes own = redis.start(RedisFixture.nodes(1));
    FaultyNodes proxied = redis.startBehindProxies(RedisFixture.nodes(1));
    proxied.cut(0);
    for (RedisNode node : List.of(own.node(0), proxied.node(0))) {
      leftProcesses.add(ProcessHandle.of(node.pid()).orElseThrow());
    }
    assertEquals("aTestLeavesKeysFaultsAClientAndNodesOfItsOwn", redis.testName());
  }

  @Test
  @Order(2)
  void theNextTestFindsTheClassNodesCleanAndTheRestClosed() {
    for (RedisNode node : redis.nodes().all()) {
      assertTrue(node.isRunning() && !node.isPaused(), node + " healed");
      try (Jedis jedis = on(node)) {
        assertEquals("PONG", jedis.ping());
        assertNull(jedis.get("left"), "emptied");
        assertTrue(jedis.get(LIFE) != null, "vouched for");
      }
    }
    assertThrows(
        IllegalStateException.class,
        () -> leftClient.tryAcquire("r", Duration.ofSeconds(1)),
        "the client the last test made was closed");
    for (ProcessHandle process : leftProcesses) {
      assertFalse(process.isAlive(), "pid " + process.pid() + " of the last test was stopped");
    }
    assertEquals(redis.nodes().uris(), redis.uris(), "direct nodes: no proxies");
    assertThrows(IllegalStateException.class, redis::faultyNodes);
  }

  @Test
  @Order(3)
  void unvouchedNodesHaveNoMarkerAndOthersHaveOne() {
    RedisNodes unvouched = redis.start(RedisFixture.nodes(1).unvouched());
    RedisNodes vouched = redis.start(RedisFixture.nodes(1));
    try (Jedis a = on(unvouched.node(0));
        Jedis b = on(vouched.node(0))) {
      assertNull(a.get(LIFE));
      assertTrue(b.get(LIFE) != null);
    }
    assertThrows(IllegalArgumentException.class, () -> RedisFixture.nodes(0));
    assertThrows(IllegalArgumentException.class, () -> RedisFixture.nodes(2).clockRate(2, 2.0));
    assertThrows(IllegalArgumentException.class, () -> RedisFixture.nodes(2).clockRate(0, 0));
  }
}
