package dev.redlock;

import static org.awaitility.Awaitility.await;

import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.LeaseContract;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;

/**
 * The lease contract on the fake cluster: three in-memory {@link FakeNode}s (from redlock-core's
 * test-jar) under Redlocks made through the package-private constructor, on the system's clock, in
 * seconds and without a redis-server. The nodes apply requests one at a time and expire keys by
 * their ttl on that clock, as Redis does; cutting the store off puts a majority in {@link
 * FakeNode.Mode#DOWN} (connection refused). Every contract test runs here: none needs more than the
 * fake's keys, ttls and failures.
 */
class FakeClusterLeaseContractTest extends LeaseContract {
  private FakeCluster cluster;

  @BeforeEach
  void startCluster() {
    cluster = closeAfterClients(new FakeCluster()); // closed after the test's clients
    cluster.addNodes(3);
    cluster.nodes.forEach(node -> node.expiryClock = System::nanoTime);
  }

  @Override
  protected Redlock createClient(Consumer<RedlockConfig.Builder> settings) {
    RedlockConfig.Builder config =
        RedlockConfig.builder()
            .nodeTimeout(TIMING.scaled(Duration.ofMillis(100)))
            .retryDelay(Duration.ofMillis(20))
            .retryJitter(Duration.ofMillis(20));
    settings.accept(config);
    return cluster.client(config);
  }

  /** Half a second, scaled: the fake answers at once, so a ttl need only outlast the scheduling. */
  @Override
  protected Duration shortTtl() {
    return TIMING.scaled(Duration.ofMillis(500));
  }

  /** A majority refuses connections. */
  @Override
  protected void disconnect() {
    cluster.node(0).mode = FakeNode.Mode.DOWN;
    cluster.node(1).mode = FakeNode.Mode.DOWN;
  }

  @Override
  protected void reconnect() {
    cluster.nodes.forEach(node -> node.mode = FakeNode.Mode.UP);
  }

  @Override
  protected List<String> nodeNames() {
    return cluster.uris();
  }

  /** No fake node holds the key (a straggling release may land after the quorum's). */
  @Override
  protected void awaitNothingKept(String resource) {
    String key = RedlockConfig.DEFAULT_KEY_PREFIX + resource;
    await("no fake node keeps " + key)
        .atMost(NO_HANG)
        .until(() -> cluster.nodes.stream().noneMatch(node -> node.holds(key)));
  }

  /** Fake nodes that hold the resource's key now. */
  @Override
  protected long placesHolding(String resource) {
    String key = RedlockConfig.DEFAULT_KEY_PREFIX + resource;
    return cluster.nodes.stream().filter(node -> node.holds(key)).count();
  }
}
