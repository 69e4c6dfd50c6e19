package dev.redlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.netcrusher.core.reactor.NioReactor;

/**
 * Real nodes, each behind its own {@link NodeProxy}: process faults through {@link #node(int)}
 * (kill, freeze, restart), network faults through {@link #proxy(int)} (cut, freeze, latency).
 * Clients use {@link #uris()}, the proxies' addresses.
 *
 * <pre>{@code
 * try (FaultyNodes nodes = FaultyNodes.start(5, Persistence.NONE)) {
 *   RedlockConfig config = RedlockConfig.builder().nodes(nodes.uris()).build();
 *   nodes.proxy(0).latency(Duration.ofMillis(30));
 *   nodes.node(1).pause();
 * }
 * }</pre>
 */
public final class FaultyNodes implements AutoCloseable {
  private final RedisNodes nodes;
  private final NioReactor reactor;
  private final List<NodeProxy> proxies;

  private FaultyNodes(RedisNodes nodes, NioReactor reactor, List<NodeProxy> proxies) {
    this.nodes = nodes;
    this.reactor = reactor;
    this.proxies = List.copyOf(proxies);
  }

  /**
   * Starts {@code count} nodes, each behind a proxy, and vouches for their data (they are new: see
   * {@link NodeData}).
   *
   * @throws MissingToolException if no redis-server can be run
   */
  public static FaultyNodes start(int count, Persistence persistence) {
    RedisNodes nodes = RedisNodes.start(count, RedisBinary.locate(), persistence);
    NioReactor reactor = null;
    List<NodeProxy> proxies = new ArrayList<>();
    try {
      reactor = new NioReactor();
      for (RedisNode node : nodes.all()) {
        proxies.add(new NodeProxy(reactor, node));
      }
      NodeData.vouchForNewNodes(nodes);
      return new FaultyNodes(nodes, reactor, proxies);
    } catch (IOException | RuntimeException e) {
      proxies.forEach(NodeProxy::close);
      if (reactor != null) {
        reactor.close();
      }
      nodes.close();
      throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
    }
  }

  /** The proxies' URIs, in node order: what clients should use. */
  public List<String> uris() {
    return proxies.stream().map(NodeProxy::uri).toList();
  }

  /** The node behind proxy {@code index}, for process faults. */
  public RedisNode node(int index) {
    return nodes.node(index);
  }

  /** The proxy in front of node {@code index}, for network faults. */
  public NodeProxy proxy(int index) {
    return proxies.get(index);
  }

  public int size() {
    return proxies.size();
  }

  /** The nodes without their proxies. */
  public RedisNodes nodes() {
    return nodes;
  }

  /**
   * Ends every fault: links restored, paused nodes resumed, killed ones restarted empty (and
   * vouched for).
   */
  public void heal() {
    proxies.forEach(NodeProxy::restore);
    for (RedisNode node : nodes.all()) {
      if (!node.isRunning()) {
        node.restart(Persistence.NONE);
        NodeData.vouchForNewNode(node, dev.redlock.RedlockConfig.DEFAULT_KEY_PREFIX);
      } else if (node.isPaused()) {
        node.resume();
      }
    }
  }

  @Override
  public void close() {
    proxies.forEach(NodeProxy::close);
    reactor.close();
    nodes.close();
  }
}
