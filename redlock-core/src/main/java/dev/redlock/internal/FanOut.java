package dev.redlock.internal;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;

/**
 * Sends one verb to every node concurrently and returns the {@link Ballot} its replies fill in.
 * The caller decides how long to wait; stragglers finish in the background, each bounded by the
 * node timeout.
 */
public final class FanOut {
  /**
   * One verb applied to one node: a positive value for yes (the value is kept, e.g. a fencing
   * counter), zero for a definite no, a negative value for "quarantined"; throws on failure.
   */
  @FunctionalInterface
  public interface Call {
    long apply(LockNode node);
  }

  private final List<LockNode> nodes;
  private final Executor executor;
  private final Ticker ticker;

  public FanOut(List<LockNode> nodes, Executor executor, Ticker ticker) {
    this.nodes = List.copyOf(nodes);
    this.executor = executor;
    this.ticker = ticker;
  }

  public List<LockNode> nodes() {
    return nodes;
  }

  /**
   * Sends {@code call} to every node concurrently.
   *
   * @param refusal the phrase for a "no" answer in the per-node account
   * @param after the ballot of the same lease's previous request, or null: each node's request
   *     starts only once that node's previous request has settled, so the requests of one lease
   *     never overtake each other on a node (a release never runs before a straggling SET NX)
   * @param skip the nodes not to send to, or null for none; for a lease, the nodes that refused
   *     its {@code SET NX} (they never held our token)
   */
  public Ballot send(Call call, String refusal, Ballot after, java.util.function.IntPredicate skip) {
    Ballot ballot = new Ballot(nodes, ticker, refusal);
    for (int i = 0; i < nodes.size(); i++) {
      int node = i;
      CompletableFuture<Void> before = after == null ? null : after.settled(node);
      if (skip != null && skip.test(node)) {
        ballot.skip(node, before);
        continue;
      }
      Runnable request = () -> run(ballot, node, call);
      if (before == null || before.isDone()) {
        dispatch(ballot, node, request);
      } else {
        before.whenComplete((ignored, error) -> dispatch(ballot, node, request));
      }
    }
    return ballot;
  }

  private void run(Ballot ballot, int node, Call call) {
    long start = ticker.read();
    try {
      long reply = call.apply(nodes.get(node));
      ballot.answer(node, reply, ticker.read() - start);
    } catch (Throwable e) {
      // Record every failure, Errors included, so nobody waits on this vote; then let an Error fly.
      ballot.fail(node, e, ticker.read() - start);
      if (e instanceof Error error) {
        throw error;
      }
    }
  }

  private void dispatch(Ballot ballot, int node, Runnable request) {
    try {
      executor.execute(request);
    } catch (RejectedExecutionException e) {
      String why = executor instanceof ExecutorService service && service.isShutdown()
          ? "not sent: the Redlock was closed"
          : "not sent: every I/O thread busy (nodes x maxConnectionsPerNode requests in flight)";
      ballot.fail(node, new RejectedExecutionException(why, e), 0);
    }
  }
}
