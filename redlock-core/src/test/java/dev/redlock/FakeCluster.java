package dev.redlock;

import dev.redlock.internal.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The unit tests' one fixture: N fake nodes, a fake clock they can advance, and a Redlock over
 * them.
 */
final class FakeCluster implements AutoCloseable {
  /** Starts far from zero, so no arithmetic can lean on it being small. */
  final AtomicLong clock = new AtomicLong(1_000_000_000L);

  final List<FakeNode> nodes = new ArrayList<>();
  private final ExecutorService io = Executors.newCachedThreadPool();
  private Redlock redlock;

  /** A Redlock over {@code n} new fake nodes, with {@code config} (nodes are added to it). */
  Redlock start(int n, RedlockConfig.Builder config, Ticker ticker) {
    for (int i = 0; i < n; i++) {
      String uri = "redis://fake:" + (7001 + i);
      nodes.add(new FakeNode(uri, clock));
      config.node(uri);
    }
    redlock = new Redlock(config.build(), List.copyOf(nodes), io, ticker);
    return redlock;
  }

  /** The same on the fake clock. */
  Redlock startOnFakeClock(int n, RedlockConfig.Builder config) {
    return start(n, config, clock::get);
  }

  FakeNode node(int index) {
    return nodes.get(index);
  }

  @Override
  public void close() {
    nodes.forEach(n -> n.unhang.countDown());
    if (redlock != null) {
      redlock.close();
    }
    io.shutdownNow();
  }
}
