package dev.redlock.quorum;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * When each node's request of one {@link Ballot} has finished, one way or another. The lease's next
 * request on a node waits for that node's "settled" future ({@link RequestOrder}); it is made only
 * when asked for before the node settled (after, every node shares one completed future), and
 * {@link #whenAll} counts settled nodes rather than combine futures: a round whose requests all
 * settle before the next one is sent makes no future at all.
 */
final class Settlements {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Settlements.class);

  /**
   * What {@link #of} returns for a node that has settled: completed, shared by every ballot. Nobody
   * completes it again (only the futures made here are completed here).
   */
  private static final CompletableFuture<Void> SETTLED = CompletableFuture.completedFuture(null);

  /** Per node, the future a later request waits on (made on demand), then {@link #SETTLED}. */
  private final CompletableFuture<?>[] settled; // guarded by this

  private int count; // guarded by this
  private List<Runnable> onAll; // guarded by this: whenAll's actions, until they run

  Settlements(int nodes) {
    this.settled = new CompletableFuture<?>[nodes];
  }

  /** Completes when the request to {@code node} has finished, whatever its result. */
  @SuppressWarnings("unchecked") // only ever CompletableFuture<Void>: made here, or SETTLED
  synchronized CompletableFuture<Void> of(int node) {
    CompletableFuture<?> f = settled[node];
    if (f == null) {
      f = new CompletableFuture<Void>();
      settled[node] = f;
    }
    return (CompletableFuture<Void>) f;
  }

  /**
   * Runs {@code action} once every node has settled: at once if they all have, else on the thread
   * that settles the last one.
   */
  void whenAll(Runnable action) {
    synchronized (this) {
      if (count < settled.length) {
        if (onAll == null) {
          onAll = new ArrayList<>(2);
        }
        onAll.add(action);
        return;
      }
    }
    run(action);
  }

  /**
   * The request to {@code node} has finished (or, for a skipped node, the request it followed):
   * completes its future if one was asked for, and once every node has settled runs what waited for
   * that, on this thread. A node settles once; a second call is ignored.
   */
  void settle(int node) {
    CompletableFuture<?> waiting;
    List<Runnable> actions = null;
    synchronized (this) {
      waiting = settled[node];
      if (waiting == SETTLED) {
        return;
      }
      settled[node] = SETTLED;
      if (++count == settled.length) {
        actions = onAll;
        onAll = null;
      }
    }
    if (waiting != null) {
      waiting.complete(null);
    }
    if (actions != null) {
      for (Runnable action : actions) {
        run(action);
      }
    }
  }

  /** One thing that waited for every node to settle: one that throws cannot stop the others. */
  private static void run(Runnable action) {
    try {
      action.run();
    } catch (RuntimeException e) {
      log.warn("an action after every node settled failed; the others still run", e);
    }
  }
}
