package dev.redlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.netcrusher.core.reactor.NioReactor;

/**
 * Real nodes, each reached through TCP fault proxies: process faults through {@link #node(int)}
 * (kill, freeze, restart), network faults through the methods here (cut, freeze, latency,
 * partition), clock faults chosen at start ({@link RedisFixture.Spec#clockRate(int, double)}). They
 * come from {@link RedisFixture#startBehindProxies} (or a fixture's nodes per class, {@link
 * RedisFixture#perClassBehindProxies}), which stops them after the test.
 *
 * <p>Every client reaches the nodes through links: {@link #uris()} is the link all clients may
 * share; {@link #uris(String)} gives one client links of its own, so a {@link #partition partition}
 * can cut some clients off some nodes while the others still reach them. Link faults on a node
 * ({@link #cut(int)}, {@link #freezeLink(int)}, {@link #latency(int, Duration)}) hit every link to
 * it. Thread-safe.
 *
 * <pre>{@code
 * FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(5));
 * Redlock a = redis.client(RedlockConfig.builder().nodes(nodes.uris("a")).build());
 * Redlock b = redis.client(RedlockConfig.builder().nodes(nodes.uris("b")).build());
 * nodes.partition(Set.of("a"), Set.of(0, 1));  // a no longer reaches nodes 0 and 1; b does
 * nodes.latency(2, Duration.ofMillis(30));       // node 2 answers everyone late
 * nodes.node(3).pause();                          // SIGSTOP
 * nodes.heal();
 * }</pre>
 */
public final class FaultyNodes implements AutoCloseable {
  private static final String SHARED = "";

  private final RedisNodes nodes;
  private final Persistence persistence;

  /**
   * One reactor (selector thread) per node: a NetCrusher reactor runs the traffic of all its
   * proxies, so a delay or a stall on one node's links must not touch the others'.
   */
  private final List<NioReactor> reactors;

  /** Links by client name, in creation order; {@link #SHARED} is the shared one. */
  private final Map<String, List<NodeProxy>> links = new LinkedHashMap<>();

  private boolean closed;

  private FaultyNodes(RedisNodes nodes, Persistence persistence, List<NioReactor> reactors) {
    this.nodes = nodes;
    this.persistence = persistence;
    this.reactors = reactors;
  }

  /**
   * Puts a proxy in front of each of {@code nodes} (which run with {@code persistence}) and, if
   * {@code vouch}, vouches for their data (they are new: see {@link NodeData}). On failure the
   * nodes are stopped too.
   */
  static FaultyNodes over(RedisNodes nodes, Persistence persistence, boolean vouch) {
    List<NioReactor> reactors = new ArrayList<>();
    try {
      for (int i = 0; i < nodes.size(); i++) {
        reactors.add(new NioReactor());
      }
      FaultyNodes faulty = new FaultyNodes(nodes, persistence, List.copyOf(reactors));
      faulty.linksOf(SHARED);
      if (vouch) {
        NodeData.vouchForNewNodes(nodes);
      }
      return faulty;
    } catch (IOException | RuntimeException e) {
      reactors.forEach(NioReactor::close); // closes the proxies made on them too
      nodes.close();
      throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
    }
  }

  /** The shared links' URIs, in node order: what clients use unless they need their own. */
  public List<String> uris() {
    return uris(SHARED);
  }

  /**
   * The URIs of {@code client}'s own links, in node order, made on first use. A {@link #partition}
   * names clients by this name.
   */
  public List<String> uris(String client) {
    return linksOf(client).stream().map(NodeProxy::uri).toList();
  }

  /** The clients that have links of their own. */
  public synchronized Set<String> clients() {
    Set<String> names = new java.util.LinkedHashSet<>(links.keySet());
    names.remove(SHARED);
    return names;
  }

  private synchronized List<NodeProxy> linksOf(String client) {
    if (client == null) {
      throw new IllegalArgumentException("client must not be null");
    }
    return links.computeIfAbsent(
        client,
        name -> {
          List<NodeProxy> made = new ArrayList<>();
          for (int i = 0; i < nodes.size(); i++) {
            made.add(
                new NodeProxy(reactors.get(i), nodes.node(i), name.isEmpty() ? "shared" : name));
          }
          return List.copyOf(made);
        });
  }

  private synchronized List<NodeProxy> linksTo(int node) {
    checkIndex(node);
    return links.values().stream().map(l -> l.get(node)).toList();
  }

  private void checkIndex(int node) {
    if (node < 0 || node >= nodes.size()) {
      throw new IllegalArgumentException(
          "node index must be 0.." + (nodes.size() - 1) + ", was " + node);
    }
  }

  /** The node at {@code index}, for process faults (kill, pause, restart). */
  public RedisNode node(int index) {
    checkIndex(index);
    return nodes.node(index);
  }

  /** The shared link to node {@code index}. */
  public NodeProxy proxy(int index) {
    checkIndex(index);
    return linksOf(SHARED).get(index);
  }

  public int size() {
    return nodes.size();
  }

  /** How the nodes keep their data across a restart. */
  public Persistence persistence() {
    return persistence;
  }

  /** The nodes without their links. */
  public RedisNodes nodes() {
    return nodes;
  }

  /** Cuts every link to node {@code index}: connections closed, new ones refused. */
  public void cut(int index) {
    linksTo(index).forEach(NodeProxy::cut);
  }

  /** Freezes every link to node {@code index}: connections stay open, nothing passes. */
  public void freezeLink(int index) {
    linksTo(index).forEach(NodeProxy::freeze);
  }

  /**
   * Delays every reply of node {@code index} to every client by {@code latency} ({@link
   * NodeProxy#latency}).
   */
  public void latency(int index, Duration latency) {
    linksTo(index).forEach(link -> link.latency(latency));
  }

  /**
   * Isolates the {@code isolatedNodes} from the {@code clients} (names given to {@link
   * #uris(String)}): their links freeze, as packets dropped by a broken network would, while every
   * other client still reaches those nodes. {@link #restoreLinks()} or {@link #heal()} ends it.
   */
  public void partition(Collection<String> clients, Collection<Integer> isolatedNodes) {
    for (String client : clients) {
      synchronized (this) {
        if (!links.containsKey(client) || client.equals(SHARED)) {
          throw new IllegalArgumentException(
              "no client '" + client + "' with links of its own; known: " + clients());
        }
      }
      List<NodeProxy> own = linksOf(client);
      for (int node : isolatedNodes) {
        checkIndex(node);
        own.get(node).freeze();
      }
    }
  }

  /** Restores every link to node {@code index}. */
  public void restoreLinks(int index) {
    linksTo(index).forEach(NodeProxy::restore);
  }

  /** Restores every link: no cut, frozen, slow or partitioned link is left. */
  public synchronized void restoreLinks() {
    links.values().forEach(l -> l.forEach(NodeProxy::restore));
  }

  /**
   * Ends every fault: links restored, paused nodes resumed, killed ones restarted with the nodes'
   * {@link Persistence}. A node restarted empty ({@link Persistence#NONE}) is not vouched for: the
   * restart guard keeps it out of votes for {@code maxTtl}, as it should.
   */
  public void heal() {
    restoreLinks();
    nodes.heal(persistence);
  }

  /** Stops the links and the nodes. Idempotent. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    links.values().forEach(l -> l.forEach(NodeProxy::close));
    reactors.forEach(NioReactor::close);
    nodes.close();
  }

  @Override
  public String toString() {
    return "FaultyNodes" + nodes.all();
  }
}
