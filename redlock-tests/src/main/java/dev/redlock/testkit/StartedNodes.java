package dev.redlock.testkit;

import dev.redlock.config.RedlockConfig;
import java.util.ArrayList;
import java.util.List;
import redis.clients.jedis.Jedis;

/**
 * Nodes a {@link RedisFixture} started, with their proxies if they have some: started from a {@link
 * RedisFixture.Spec}, healed and cleaned between tests, closed once.
 */
final class StartedNodes implements AutoCloseable {
  final RedisFixture.Spec spec;
  final RedisNodes nodes;
  final FaultyNodes faulty;
  final TlsFiles tls; // null: plain
  private boolean closed;

  StartedNodes(RedisFixture.Spec spec, RedisNodes nodes, FaultyNodes faulty, TlsFiles tls) {
    this.spec = spec;
    this.nodes = nodes;
    this.faulty = faulty;
    this.tls = tls;
  }

  /**
   * Starts the nodes of {@code spec}, behind proxies or not; a missing tool skips the test (fails
   * it under {@code CI=true}).
   */
  static StartedNodes start(RedisFixture.Spec spec, boolean proxies) {
    return Tools.requireOrSkip(
        () -> {
          RedisBinary plain = spec.binary.get();
          List<RedisBinary> binaries = new ArrayList<>();
          for (int i = 0; i < spec.count; i++) {
            Double rate = spec.clockRates.get(i);
            binaries.add(rate == null ? plain : RedisBinary.withFastClock(rate));
          }
          TlsFiles files =
              !spec.tls ? null : spec.tlsFiles != null ? spec.tlsFiles : TlsFiles.generate();
          if (files != null && proxies) {
            throw new IllegalArgumentException("TLS nodes behind proxies are not supported yet");
          }
          RedisNodes nodes = RedisNodes.start(binaries, spec.persistence, files);
          if (proxies) {
            return new StartedNodes(
                spec, nodes, FaultyNodes.over(nodes, spec.persistence, spec.vouched), null);
          }
          if (spec.vouched) {
            NodeData.vouchForNewNodes(nodes);
          }
          return new StartedNodes(spec, nodes, null, files);
        });
  }

  /** Every node running and answering, every link restored. */
  void heal() {
    if (faulty != null) {
      faulty.heal();
    } else {
      nodes.heal(spec.persistence);
    }
  }

  /** Healed, then every node emptied and, unless unvouched, vouched for. */
  void clean() {
    heal();
    for (RedisNode node : nodes.all()) {
      try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 2000)) {
        jedis.flushAll();
        jedis.configSet("requirepass", "");
      }
      if (spec.vouched) {
        NodeData.vouchForNewNode(node, RedlockConfig.DEFAULT_KEY_PREFIX);
      }
    }
  }

  /** How many of the nodes, running and not paused, hold {@code key}. */
  long nodesWithKey(String key) {
    return nodes.all().stream()
        .filter(RedisNode::isRunning)
        .filter(node -> !node.isPaused())
        .filter(
            node -> {
              try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 2000)) {
                return jedis.exists(key);
              }
            })
        .count();
  }

  @Override
  public synchronized void close() {
    if (!closed) {
      closed = true;
      if (faulty != null) {
        faulty.close();
      } else {
        nodes.close();
      }
    }
  }
}
