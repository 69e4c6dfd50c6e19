package dev.redlock.testkit;

import dev.redlock.admin.NewNodeCheck;
import dev.redlock.admin.RedlockAdmin;
import dev.redlock.config.RedlockConfig;
import redis.clients.jedis.Jedis;

/**
 * Vouches for a node's data, so the restart guard lets it vote at once.
 *
 * <p>The guard keeps a node out of votes for {@code maxTtl} once its data may lack leases it
 * granted (it is new, came back empty, or reloaded older data), because such a node may have
 * forgotten a lock still valid elsewhere. A node this test (or example) has <em>just created</em>
 * never held a lock, so there is nothing it could have forgotten: stamping its data as trusted
 * since long ago, by the process now running, is safe. Doing the same to a node that restarted is
 * exactly the mistake the guard exists to catch.
 */
public final class NodeData {
  private NodeData() {}

  /**
   * Vouches for the node's data as {@code redlock init-nodes} does, for clients using {@code
   * keyPrefix}: this process, trusted since time 0, durable (clients that see the node is not
   * durable lower that at their first acquire, so a restart of a node without {@code appendfsync
   * always} is still quarantined).
   *
   * @throws IllegalStateException if the node holds keys of the prefix (it is not new)
   */
  public static void vouchForNewNode(RedisNode node, String keyPrefix) {
    RedlockConfig config = // the plain port, which a TLS node opens too
        RedlockConfig.builder()
            .nodes(java.util.List.of("redis://127.0.0.1:" + node.port()))
            .keyPrefix(keyPrefix)
            .build();
    String runId;
    try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 2000)) {
      runId = runId(jedis);
    }
    try (RedlockAdmin admin = RedlockAdmin.create(config)) {
      NewNodeCheck check = admin.vouchForNewNode(0, runId, "test kit");
      if (!check.vouched() && check.verdict() != NewNodeCheck.Verdict.VOTES) {
        throw new IllegalStateException("cannot vouch for " + node + ": " + check);
      }
    }
  }

  /** Marks every node's data as old for clients using the default key prefix. */
  public static void vouchForNewNodes(RedisNodes nodes) {
    nodes.all().forEach(node -> vouchForNewNode(node, RedlockConfig.DEFAULT_KEY_PREFIX));
  }

  /** The node's {@code run_id}: a new one after every restart. */
  public static String runId(Jedis jedis) {
    for (String line : jedis.info("server").split("\\r?\\n")) {
      if (line.startsWith("run_id:")) {
        return line.substring("run_id:".length()).trim();
      }
    }
    throw new IllegalStateException("INFO server has no run_id");
  }
}
