package dev.redlock.quorum;

import dev.redlock.node.LockNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each node's first connection, opened in the background when the store is made, and the first
 * attempt's wait for them, so that a one-shot job's only attempt is not lost to connection setup.
 */
final class FirstConnections {
  // The store's logger, where operators route the quorum's messages.
  private static final Logger log = LoggerFactory.getLogger(QuorumStore.class);

  private final List<LockNode> nodes;
  private final ExecutorService io;
  private final int quorum;
  private final long connectTimeoutNanos;
  private final long nodeTimeoutNanos;
  private volatile List<CompletableFuture<Void>> opening = List.of();
  private volatile long openedAt;

  /** Set once the first attempt has waited for the first connections: later ones never wait. */
  private volatile boolean connected;

  FirstConnections(
      List<LockNode> nodes,
      ExecutorService io,
      int quorum,
      long connectTimeoutNanos,
      long nodeTimeoutNanos) {
    this.nodes = nodes;
    this.io = io;
    this.quorum = quorum;
    this.connectTimeoutNanos = connectTimeoutNanos;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
  }

  /**
   * Starts opening one connection to every node, on the I/O threads, so that the first attempt
   * finds them made (a connection can take longer than a request: a cold JVM, a TLS handshake).
   */
  void open() {
    // System.nanoTime, not the ticker: the bound is on real waiting (a test's clock may stand).
    openedAt = System.nanoTime();
    List<CompletableFuture<Void>> opening = new ArrayList<>();
    for (LockNode node : nodes) {
      CompletableFuture<Void> opened = new CompletableFuture<>();
      opening.add(opened);
      try {
        io.execute(
            () -> {
              try {
                node.open();
                opened.complete(null);
              } catch (Throwable e) {
                log.debug("could not open a first connection to {}: {}", node.name(), e.toString());
                opened.completeExceptionally(e);
              }
            });
      } catch (RejectedExecutionException e) {
        opened.completeExceptionally(e); // closed already
      }
    }
    this.opening = List.copyOf(opening);
  }

  /**
   * The first attempt waits for the first connections: until every node is connected or failed, at
   * most a node timeout more once a quorum is, and at most the connect timeout in all. Later
   * attempts return at once: a node that comes up later is connected on demand.
   */
  void await() throws InterruptedException {
    if (connected) {
      return;
    }
    List<CompletableFuture<Void>> opening = this.opening;
    long deadline = openedAt + connectTimeoutNanos;
    while (true) {
      int ok = 0;
      List<CompletableFuture<Void>> pending = new ArrayList<>();
      for (CompletableFuture<Void> f : opening) {
        if (!f.isDone()) {
          pending.add(f);
        } else if (!f.isCompletedExceptionally()) {
          ok++;
        }
      }
      long now = System.nanoTime();
      if (ok >= quorum) { // a later round's bound is later: the first round with a quorum sets it
        deadline = Math.min(deadline, now + nodeTimeoutNanos);
      }
      if (pending.isEmpty() || now - deadline >= 0) {
        break;
      }
      try {
        CompletableFuture.anyOf(pending.toArray(new CompletableFuture<?>[0]))
            .get(deadline - now, TimeUnit.NANOSECONDS);
      } catch (ExecutionException | TimeoutException e) {
        // a node failed (counted next round) or the time is up (the loop ends)
      }
    }
    connected = true;
  }
}
