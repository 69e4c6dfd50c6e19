package dev.redlock;

import dev.redlock.config.RedlockConfig;
import dev.redlock.timing.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The unit tests' one fixture: N fake nodes, a fake clock they can advance, and a Redlock over
 * them. {@link #client} adds more Redlocks over the same nodes, each with I/O threads of its own:
 * the lease contract runs on that ({@code FakeClusterLeaseContractTest} in redlock-tests, through
 * this module's test-jar).
 */
final class FakeCluster implements AutoCloseable {
  /** Starts far from zero, so no arithmetic can lean on it being small. */
  final AtomicLong clock = new AtomicLong(1_000_000_000L);

  final List<FakeNode> nodes = new ArrayList<>();
  private final ExecutorService io = Executors.newCachedThreadPool();
  private final List<ExecutorService> clientIo = new ArrayList<>();
  private final List<Redlock> clients = new ArrayList<>();
  private Redlock redlock;

  /** A Redlock over {@code n} new fake nodes, with {@code config} (nodes are added to it). */
  Redlock start(int n, RedlockConfig.Builder config, Ticker ticker) {
    addNodes(n);
    uris().forEach(config::node);
    redlock = new Redlock(config.build(), List.copyOf(nodes), io, ticker);
    return redlock;
  }

  /** Adds {@code n} new fake nodes, with no Redlock over them yet (see {@link #client}). */
  void addNodes(int n) {
    for (int i = 0; i < n; i++) {
      nodes.add(new FakeNode("redis://fake:" + (7001 + nodes.size()), clock));
    }
  }

  /** The same on the fake clock. */
  Redlock startOnFakeClock(int n, RedlockConfig.Builder config) {
    return start(n, config, clock::get);
  }

  FakeNode node(int index) {
    return nodes.get(index);
  }

  /** The nodes' URIs, in order. */
  List<String> uris() {
    return nodes.stream().map(FakeNode::name).toList();
  }

  /**
   * A Redlock over the nodes on the system's monotonic clock (see {@link
   * #client(RedlockConfig.Builder, Ticker)}).
   */
  Redlock client(RedlockConfig.Builder config) {
    return client(config, Ticker.SYSTEM);
  }

  /**
   * Another Redlock over this cluster's nodes ({@link #addNodes} or {@link #start} made them), with
   * {@code config} (the nodes are added to it) and I/O threads of its own, so closing one client
   * leaves the others working. Closed by {@link #close()} if the test has not closed it.
   */
  synchronized Redlock client(RedlockConfig.Builder config, Ticker ticker) {
    uris().forEach(config::node);
    ExecutorService threads = Executors.newCachedThreadPool();
    clientIo.add(threads);
    Redlock client = new Redlock(config.build(), List.copyOf(nodes), threads, ticker);
    clients.add(client);
    return client;
  }

  @Override
  public void close() {
    nodes.forEach(n -> n.unhang.countDown());
    if (redlock != null) {
      redlock.close();
    }
    synchronized (this) {
      clients.forEach(Redlock::close);
      clientIo.forEach(ExecutorService::shutdownNow);
    }
    io.shutdownNow();
  }
}
