package dev.redlock.testkit;

import java.util.ArrayList;
import java.util.List;

/**
 * K real {@code redis-server} processes on free loopback ports: the fixture the integration suites
 * and examples stand on.
 *
 * <pre>{@code
 * try (RedisNodes nodes = RedisNodes.start(5)) {
 *   RedlockConfig config = RedlockConfig.builder().nodes(nodes.uris()).build();
 *   nodes.node(0).pause();   // SIGSTOP
 *   ...
 * }                          // every process this fixture started is killed, by PID
 * }</pre>
 */
public final class RedisNodes implements AutoCloseable {
  private final List<RedisNode> nodes;
  private final TlsFiles tls; // null: plain

  private RedisNodes(List<RedisNode> nodes, TlsFiles tls) {
    this.tls = tls;
    this.nodes = List.copyOf(nodes);
  }

  /**
   * Starts {@code count} nodes without persistence, with the default binary ({@link
   * RedisBinary#locate()}).
   */
  public static RedisNodes start(int count) {
    return start(count, RedisBinary.locate(), Persistence.NONE);
  }

  /**
   * Starts {@code count} nodes and waits until each answers PING. If one fails to start, those
   * already started are stopped before the error is thrown.
   *
   * @throws MissingToolException if the binary cannot be run
   */
  public static RedisNodes start(int count, RedisBinary binary, Persistence persistence) {
    if (count < 1) {
      throw new IllegalArgumentException("count must be >= 1, was " + count);
    }
    return start(java.util.Collections.nCopies(count, binary), persistence);
  }

  /**
   * Starts one node per binary (for instance some with a fast clock), in order, and waits until
   * each answers PING. If one fails to start, those already started are stopped before the error is
   * thrown.
   *
   * @throws MissingToolException if a binary cannot be run
   */
  public static RedisNodes start(List<RedisBinary> binaries, Persistence persistence) {
    return start(binaries, persistence, null);
  }

  /**
   * {@link #start(List, Persistence)}, each node also serving TLS with {@code tls} (null: plain):
   * then {@link #uris()} are {@code rediss://} URIs, and each node's {@link RedisNode#port()} stays
   * plain for the kit's own commands.
   *
   * @throws MissingToolException if a binary cannot be run
   */
  public static RedisNodes start(
      List<RedisBinary> binaries, Persistence persistence, TlsFiles tls) {
    if (binaries.isEmpty()) {
      throw new IllegalArgumentException("binaries must not be empty");
    }
    List<RedisNode> started = new ArrayList<>();
    try {
      for (RedisBinary binary : binaries) {
        started.add(RedisNode.start(binary, persistence, tls));
      }
      return new RedisNodes(started, tls);
    } catch (RuntimeException e) {
      started.forEach(RedisNode::close);
      throw e;
    }
  }

  /** The TLS files the nodes serve with, if they serve TLS. */
  public java.util.Optional<TlsFiles> tls() {
    return java.util.Optional.ofNullable(tls);
  }

  public RedisNode node(int index) {
    return nodes.get(index);
  }

  public List<RedisNode> all() {
    return nodes;
  }

  public int size() {
    return nodes.size();
  }

  /** The nodes' URIs, in order. */
  public List<String> uris() {
    return nodes.stream().map(RedisNode::uri).toList();
  }

  /**
   * Brings every node back to running and answering: resumes paused ones, restarts killed ones
   * empty.
   */
  public void heal() {
    heal(Persistence.NONE);
  }

  /**
   * Resumes paused nodes and restarts killed ones with {@code mode} (AOF: with the data they had).
   */
  public void heal(Persistence mode) {
    for (RedisNode node : nodes) {
      if (!node.isRunning()) {
        node.restart(mode);
      } else if (node.isPaused()) {
        node.resume();
      }
    }
  }

  /** Stops every node this fixture started. Idempotent. */
  @Override
  public void close() {
    nodes.forEach(RedisNode::close);
  }

  @Override
  public String toString() {
    return "RedisNodes" + nodes;
  }
}
