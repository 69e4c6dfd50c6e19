package dev.redlock.quorum;

import dev.redlock.internal.IoThreads;
import dev.redlock.node.LockNode;
import dev.redlock.node.NodeRequest;
import dev.redlock.timing.Ticker;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;

/**
 * Sends one request to every node and returns the {@link Ballot} its replies fill in. The sending
 * thread writes every request itself, fastest nodes first, before any reply is read; the thread
 * that awaits the ballot then reads the replies. A request goes to an I/O thread only if it must
 * wait for an earlier one of the same lease on the same node, or if its node's connections are not
 * open (connecting waits on the node). When every I/O thread is busy, the caller does that work
 * itself (bounded by the node timeout): under overload a request is late, never dropped.
 */
final class FanOut {
  /** A request that may go out however late its predecessor settles (releases, extends). */
  private static final long NO_DEADLINE = Long.MIN_VALUE;

  private static final String NOT_SENT_LATE =
      "not sent: this client's earlier request there settled after the vote's deadline";
  private final List<LockNode> nodes;
  private final Executor io;
  private final Ticker ticker;
  private final long nodeTimeoutNanos;
  private final NodeStates standing; // each node's standing, logged once per change
  private final NodeLatencies latencies;
  private final NodePipeline[] pipelines;
  private final ThreadPoolExecutor drains;

  /**
   * Where a request runs once its predecessor settled: an I/O thread, or the completing thread when
   * every I/O thread is busy (back-pressure, never a lost request). Not the completing thread by
   * default: a chain of requests that settle at once (skips) would otherwise unroll as one deep
   * recursion.
   */
  private final Executor followers;

  FanOut(
      List<LockNode> nodes,
      Executor io,
      Ticker ticker,
      long nodeTimeoutNanos,
      NodeStates standing) {
    this.standing = standing;
    this.nodes = List.copyOf(nodes);
    this.io = io;
    this.ticker = ticker;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
    this.followers =
        command -> {
          try {
            io.execute(command);
          } catch (RejectedExecutionException e) {
            command.run(); // busy or closed: run here (a closed store's request fails itself)
          }
        };
    this.latencies = new NodeLatencies(nodes.size());
    // At most one drain per node runs at a time: with a thread per node and a queue, a renewal is
    // never refused for want of a thread (the shared I/O threads may all be busy).
    this.drains =
        new ThreadPoolExecutor(
            this.nodes.size(),
            this.nodes.size(),
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            IoThreads.daemonThreads("redlock-pipeline-"));
    drains.allowCoreThreadTimeOut(true);
    this.pipelines = new NodePipeline[this.nodes.size()];
    for (int i = 0; i < pipelines.length; i++) {
      pipelines[i] =
          new NodePipeline(i, this.nodes.get(i), drains, ticker, nodeTimeoutNanos, latencies);
    }
  }

  /** Stops the pipelines' threads: what is queued fails, what is in flight ends on its own. */
  void close() {
    drains.shutdown();
  }

  List<LockNode> nodes() {
    return nodes;
  }

  /**
   * Sends {@code request} to every node.
   *
   * @param refusal the phrase for a "no" answer in the per-node account
   * @param order the order of the lease's requests, or null for a request of no lease: each node's
   *     request starts only once the lease's previous request there has settled
   * @param skip the nodes not to send to, or null for none; for a lease, the nodes that refused its
   *     {@code SET NX} (they never held our token)
   */
  Ballot send(NodeRequest request, String refusal, RequestOrder order, IntPredicate skip) {
    return send(request, refusal, order, skip, NO_DEADLINE, false);
  }

  /**
   * {@link #send(NodeRequest, String, RequestOrder, IntPredicate)}, for a vote: a node whose
   * earlier request there settles only at or after {@code sendBy} is not sent to at all (SKIPPED):
   * its vote can no longer count, and a late {@code SET NX} would only leave a key to release. So a
   * chain of requests behind a slow node cannot grow: each waits at most until its own vote is
   * over.
   */
  Ballot send(
      NodeRequest request, String refusal, RequestOrder order, IntPredicate skip, long sendBy) {
    return send(request, refusal, order, skip, sendBy, false);
  }

  /**
   * Sends {@code request} to every node without any thread waiting on it (parameters as {@link
   * #send}): each node's request joins that node's {@link NodePipeline}, and goes out with the
   * others gathered there in one pipelined write. For requests nobody waits on (renewals); pair
   * with {@link Ballot#whenDecided}.
   */
  Ballot sendPipelined(NodeRequest request, String refusal, RequestOrder order, IntPredicate skip) {
    return send(request, refusal, order, skip, NO_DEADLINE, true);
  }

  private Ballot send(
      NodeRequest request,
      String refusal,
      RequestOrder order,
      IntPredicate skip,
      long sendBy,
      boolean pipelined) {
    Ballot ballot =
        new Ballot(
            nodes,
            ticker,
            refusal,
            latencies,
            io,
            nodeTimeoutNanos,
            standing,
            request.verb() == NodeRequest.Verb.ACQUIRE);
    RequestOrder.Preceding after = order == null ? null : order.follow(ballot);
    // Written fastest first; a pipeline's write is another thread's, so node order is as good.
    int[] fastest = pipelined ? null : latencies.fastestFirst();
    for (int i = 0; i < nodes.size(); i++) {
      int node = pipelined ? i : fastest[i];
      CompletableFuture<Void> before = after == null ? null : after.settled(node);
      if (skip != null && skip.test(node)) {
        ballot.skip(node, before);
      } else if (before == null || before.isDone()) {
        if (pipelined) {
          pipelines[node].add(ballot, request);
        } else {
          start(ballot, node, request);
        }
      } else {
        before.whenCompleteAsync(
            (ignored, error) -> startBehind(ballot, node, request, skip, sendBy, pipelined),
            followers);
      }
    }
    return ballot;
  }

  /**
   * Starts a request once the previous one on its node settled, unless the node is now one to skip
   * (the lease's {@code SET NX} there was refused, or never sent) or the vote's deadline has
   * passed. Whatever goes wrong is the node's failure: an exception thrown here would be lost in
   * the future that ran it, and the node would never settle.
   */
  private void startBehind(
      Ballot ballot,
      int node,
      NodeRequest request,
      IntPredicate skip,
      long sendBy,
      boolean pipelined) {
    try {
      if (skip != null && skip.test(node)) {
        ballot.skip(node, null);
      } else if (sendBy != NO_DEADLINE && ticker.read() - sendBy >= 0) {
        ballot.skip(node, null, NOT_SENT_LATE);
      } else if (pipelined) {
        pipelines[node].add(ballot, request);
      } else {
        runToEnd(ballot, node, request); // already on an I/O thread (or back-pressured here)
      }
    } catch (Throwable e) {
      ballot.failIfOpen(node, e); // runToEnd records its own failures: count each node once
      if (e instanceof Error error) {
        throw error;
      }
    }
  }

  /**
   * Starts one node's request: written on this thread if the node has an idle connection, else run
   * by an I/O thread (connecting first waits on the node).
   */
  private void start(Ballot ballot, int node, NodeRequest request) {
    if (nodes.get(node).hasIdleConnection()) {
      // Never waits on the node, however late it answers: a bounded backlog fits the socket.
      begin(ballot, node, request);
    } else {
      try {
        io.execute(() -> runToEnd(ballot, node, request));
      } catch (RejectedExecutionException e) {
        if (io instanceof ExecutorService service && service.isShutdown()) {
          ballot.fail(
              node, new RejectedExecutionException("not sent: the Redlock was closed", e), 0);
        } else {
          runToEnd(ballot, node, request); // every I/O thread busy: back-pressure, never dropped
        }
      }
    }
  }

  /** Writes the request now, on this thread; the awaiting thread reads the reply. */
  private void begin(Ballot ballot, int node, NodeRequest request) {
    long start = ticker.read();
    try {
      ballot.inFlight(node, nodes.get(node).begin(request), start);
    } catch (RuntimeException e) {
      ballot.failStartedAt(node, e, start);
    }
  }

  /** A request written and read on an I/O thread (or, if none is free, the caller's). */
  private void runToEnd(Ballot ballot, int node, NodeRequest request) {
    long start = ticker.read();
    try {
      ballot.answerStartedAt(node, nodes.get(node).begin(request).finish(nodeTimeoutNanos), start);
    } catch (Throwable e) {
      ballot.failStartedAt(node, e, start);
      if (e instanceof Error error) {
        throw error;
      }
    }
  }
}
