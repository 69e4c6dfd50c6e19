package dev.redlock.it;

import dev.redlock.LockService;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.LeaseContract;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Tools;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The lease contract every store keeps, on a quorum of 3 real Redis nodes. */
class RedisLeaseContractIT extends LeaseContract {
  static RedisNodes nodes;

  @BeforeAll
  static void start() {
    nodes = Tools.requireOrSkip(() -> RedisNodes.start(3));
    NodeData.vouchForNewNodes(nodes);
  }

  @AfterAll
  static void stop() {
    if (nodes != null) {
      nodes.close();
    }
  }

  @Override
  protected LockService createClient() {
    return Redlock.create(
        RedlockConfig.builder()
            .nodes(nodes.uris())
            .nodeTimeout(Duration.ofMillis(100))
            .retryDelay(Duration.ofMillis(5))
            .retryJitter(Duration.ofMillis(10))
            .build());
  }

  @Override
  protected Duration shortTtl() {
    return Duration.ofSeconds(1);
  }

  /** A frozen majority: nothing can be renewed. */
  @Override
  protected void disconnect() {
    nodes.node(0).pause();
    nodes.node(1).pause();
  }

  @Override
  protected void reconnect() {
    for (RedisNode node : nodes.all()) {
      if (node.isPaused()) {
        node.resume();
      }
    }
  }
}
