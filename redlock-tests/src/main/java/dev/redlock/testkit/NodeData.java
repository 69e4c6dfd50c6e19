package dev.redlock.testkit;

import dev.redlock.RedlockConfig;
import dev.redlock.internal.NodeKeys;
import redis.clients.jedis.Jedis;

/**
 * Vouches for a node's data, so the restart guard lets it vote at once.
 *
 * <p>The guard keeps a node out of votes until its data is older than {@code maxTtl}, because a
 * node that restarted empty may have forgotten a lock still valid elsewhere. A node this test (or
 * example) has <em>just created</em> never held a lock, so there is nothing it could have
 * forgotten: marking its data as old is safe. Doing the same to a node that restarted is exactly
 * the mistake the guard exists to catch.
 */
public final class NodeData {
  private NodeData() {}

  /** Marks the node's data as old for clients using {@code keyPrefix}. */
  public static void vouchForNewNode(RedisNode node, String keyPrefix) {
    try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 2000)) {
      jedis.set(NodeKeys.of(keyPrefix, 0, true).epochKey(), "0");
    }
  }

  /** Marks every node's data as old for clients using the default key prefix. */
  public static void vouchForNewNodes(RedisNodes nodes) {
    nodes.all().forEach(node -> vouchForNewNode(node, RedlockConfig.DEFAULT_KEY_PREFIX));
  }
}
