package dev.redlock.quorum;

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
  private Ballot last; // guarded by this

  /** An order whose first request follows nothing. */
  RequestOrder() {}

  /**
   * An order whose first request follows {@code before} (null for nothing): a new lease of a key
   * behind the release of the previous one, so that on a node where that release is still on its
   * way the new {@code SET NX} cannot arrive first and be refused by our own old key.
   */
  RequestOrder(Ballot before) {
    this.last = before;
  }

  /** Puts {@code next} last in the order; returns the request it must follow, or null if none. */
  synchronized Ballot follow(Ballot next) {
    Ballot before = last;
    last = next;
    return before;
  }
}
