package dev.redlock.quorum;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The order of one lease's requests, node by node: each request starts on a node only once the
 * lease's previous request there has settled ({@link Ballot#settled}), so that, for example, a
 * release never overtakes a straggling {@code SET NX}, and an extend never lands after the release
 * that followed it.
 *
 * <p>Taking a place in the order is atomic: a renewal and a release sent at the same instant from
 * two threads are still put one behind the other, never both behind the same earlier request.
 */
final class RequestOrder {
  /** What a request waits for, node by node: the previous request there to have settled. */
  interface Preceding {
    /** Completes once the earlier request (or requests) on {@code node} have settled. */
    CompletableFuture<Void> settled(int node);
  }

  private Preceding last; // guarded by this

  /**
   * An order whose first request follows every one of {@code before} (a multi-resource lease behind
   * the unsettled releases of each of its keys); an empty list is nothing to follow.
   */
  RequestOrder(List<Ballot> before) {
    if (before.size() == 1) {
      this.last = before.get(0);
    } else if (!before.isEmpty()) {
      Ballot[] all = before.toArray(new Ballot[0]);
      this.last =
          node -> {
            CompletableFuture<?>[] each = new CompletableFuture<?>[all.length];
            for (int i = 0; i < all.length; i++) {
              each[i] = all[i].settled(node);
            }
            return CompletableFuture.allOf(each);
          };
    }
  }

  /**
   * An order whose first request follows {@code before} (null for nothing): a new lease of a key
   * behind the release of the previous one (see {@link QuorumStore}'s {@code unsettled}).
   */
  RequestOrder(Ballot before) {
    this.last = before;
  }

  /** Puts {@code next} last in the order; returns the request it must follow, or null if none. */
  synchronized Preceding follow(Ballot next) {
    Preceding before = last;
    last = next;
    return before;
  }
}
