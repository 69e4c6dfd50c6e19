package dev.redlock.internal;

import dev.redlock.NodeOutcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The votes of one request sent to every node: filled in by the I/O threads as replies arrive,
 * read by the caller as soon as the outcome is decided. Indexed like the node list.
 *
 * <p>Each node also has a "settled" future, completed when that node's request has finished one
 * way or another; a later request on the same lease waits for it, so that, for example, a
 * release never overtakes a straggling {@code SET NX} on the same node.
 */
public final class Ballot {
  private final List<LockNode> nodes;
  private final Ticker ticker;
  private final String refusal;
  private final NodeOutcome.Status[] status;
  private final String[] detail;
  private final long[] latencyNanos;
  private final long[] values;
  private final Throwable[] errors;
  private final List<CompletableFuture<Void>> settled;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private int ok;
  private int answered;
  private int decisionQuorum;
  private Runnable onDecided; // run once, by whichever thread records the deciding vote
  private long awaitedUntil = Long.MIN_VALUE;

  Ballot(List<LockNode> nodes, Ticker ticker, String refusal) {
    int n = nodes.size();
    this.nodes = nodes;
    this.ticker = ticker;
    this.refusal = refusal;
    this.status = new NodeOutcome.Status[n];
    this.detail = new String[n];
    this.latencyNanos = new long[n];
    this.values = new long[n];
    this.errors = new Throwable[n];
    this.settled = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      settled.add(new CompletableFuture<>());
    }
  }

  /**
   * Marks a node not sent to. Its "settled" future follows {@code before} (the previous request
   * on that node), so a later request still waits for a straggler there.
   */
  void skip(int node, CompletableFuture<Void> before) {
    lock.lock();
    try {
      status[node] = NodeOutcome.Status.SKIPPED;
      detail[node] = "not sent: known not to hold the key, or not needed";
      answered++;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    if (before == null || before.isDone()) {
      settled.get(node).complete(null);
    } else {
      before.whenComplete((ignored, error) -> settled.get(node).complete(null));
    }
  }

  void answer(int node, long reply, long latency) {
    if (reply > 0) {
      lock.lock();
      try {
        values[node] = reply;
      } finally {
        lock.unlock();
      }
      record(node, NodeOutcome.Status.OK, "", latency, null);
    } else if (reply == 0) {
      record(node, NodeOutcome.Status.REFUSED, refusal, latency, null);
    } else {
      record(node, NodeOutcome.Status.QUARANTINED,
          "data younger than maxTtl (restarted or flushed?): no vote for another " + (-reply - 1) + " ms", latency, null);
    }
  }

  void fail(int node, Throwable error, long latency) {
    record(node, NodeFailures.status(error), NodeFailures.describe(error), latency, error);
  }

  private void record(int node, NodeOutcome.Status s, String text, long latency, Throwable error) {
    Runnable decided;
    lock.lock();
    try {
      status[node] = s;
      detail[node] = text;
      latencyNanos[node] = latency;
      errors[node] = error;
      answered++;
      if (s == NodeOutcome.Status.OK) {
        ok++;
      }
      changed.signalAll();
      decided = takeDecisionCallback();
    } finally {
      lock.unlock();
    }
    settled.get(node).complete(null);
    if (decided != null) {
      decided.run();
    }
  }

  /**
   * Runs {@code action} once the outcome for {@code quorum} is decided (see {@link #awaitQuorum}),
   * on the thread that records the deciding vote, or at once if it is decided already. Nobody
   * waits: this is how renewals avoid parking a thread per lease on the nodes.
   */
  public void whenDecided(int quorum, Runnable action) {
    Runnable now;
    lock.lock();
    try {
      decisionQuorum = quorum;
      onDecided = action;
      now = takeDecisionCallback();
    } finally {
      lock.unlock();
    }
    if (now != null) {
      now.run();
    }
  }

  private Runnable takeDecisionCallback() {
    if (onDecided == null || !isDecided(decisionQuorum)) {
      return null;
    }
    Runnable action = onDecided;
    onDecided = null;
    return action;
  }

  private boolean isDecided(int quorum) {
    return ok >= quorum || ok + (nodes.size() - answered) < quorum || answered == nodes.size();
  }

  /**
   * Waits until the outcome is decided: {@code quorum} nodes said yes, or so many said no or
   * failed that a quorum is out of reach, or every node answered; or until {@code deadline}.
   *
   * @return the number of nodes that said yes at that moment
   */
  public int awaitQuorum(int quorum, long deadline) throws InterruptedException {
    lock.lock();
    try {
      while (!isDecided(quorum)) {
        if (!awaitUntil(deadline)) {
          break;
        }
      }
      markAwaited(deadline);
      return ok;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until {@code count} nodes gave a definite answer (yes, no, or skipped as known absent),
   * or every node answered, or until {@code deadline}. A release needs no more: once a quorum no
   * longer holds the key, another client can take it.
   */
  public void awaitDefinite(int count, long deadline) throws InterruptedException {
    lock.lock();
    try {
      while (definite() < count && answered < nodes.size()) {
        if (!awaitUntil(deadline)) {
          break;
        }
      }
      markAwaited(deadline);
    } finally {
      lock.unlock();
    }
  }

  private int definite() {
    int n = 0;
    for (NodeOutcome.Status s : status) {
      if (s == NodeOutcome.Status.OK || s == NodeOutcome.Status.REFUSED || s == NodeOutcome.Status.SKIPPED
          || s == NodeOutcome.Status.QUARANTINED) {
        n++;
      }
    }
    return n;
  }

  /** Runs {@code action} once every node's request has settled (at once if they all have). */
  public void whenAllSettled(Runnable action) {
    CompletableFuture.allOf(settled.toArray(new CompletableFuture<?>[0])).thenRun(action);
  }

  /** Waits until every node answered, or until {@code deadline}. */
  public void awaitAll(long deadline) throws InterruptedException {
    lock.lock();
    try {
      while (answered < nodes.size()) {
        if (!awaitUntil(deadline)) {
          break;
        }
      }
      markAwaited(deadline);
    } finally {
      lock.unlock();
    }
  }

  private boolean awaitUntil(long deadline) throws InterruptedException {
    long left = deadline - ticker.read();
    if (left <= 0) {
      return false;
    }
    changed.await(left, TimeUnit.NANOSECONDS);
    return true;
  }

  private void markAwaited(long deadline) {
    awaitedUntil = Math.max(awaitedUntil, deadline);
  }

  /** How many nodes said yes so far. */
  public int yes() {
    lock.lock();
    try {
      return ok;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether the node answered a definite "no": for the acquire script that means our token was
   * not written there (held elsewhere, or quarantined).
   */
  public boolean refused(int node) {
    lock.lock();
    try {
      return status[node] == NodeOutcome.Status.REFUSED || status[node] == NodeOutcome.Status.SKIPPED
          || status[node] == NodeOutcome.Status.QUARANTINED;
    } finally {
      lock.unlock();
    }
  }

  /** Whether the node said yes. */
  public boolean isYes(int node) {
    lock.lock();
    try {
      return status[node] == NodeOutcome.Status.OK;
    } finally {
      lock.unlock();
    }
  }

  /** The value a node that said yes returned (for the acquire script, its fencing counter); 0 otherwise. */
  public long value(int node) {
    lock.lock();
    try {
      return status[node] == NodeOutcome.Status.OK ? values[node] : 0;
    } finally {
      lock.unlock();
    }
  }

  public int size() {
    return nodes.size();
  }

  /** Completes when the request to {@code node} has finished, whatever its result. */
  CompletableFuture<Void> settled(int node) {
    return settled.get(node);
  }

  /** A snapshot of the per-node account, in node order. */
  public List<NodeOutcome> outcomes() {
    lock.lock();
    try {
      boolean pastDeadline = ticker.read() - awaitedUntil >= 0;
      List<NodeOutcome> out = new ArrayList<>(nodes.size());
      for (int i = 0; i < nodes.size(); i++) {
        if (status[i] == null) {
          out.add(pastDeadline
              ? new NodeOutcome(nodes.get(i).name(), NodeOutcome.Status.TIMED_OUT, "no reply within nodeTimeout", Duration.ZERO)
              : new NodeOutcome(nodes.get(i).name(), NodeOutcome.Status.PENDING, "not awaited: outcome already decided", Duration.ZERO));
        } else {
          out.add(new NodeOutcome(nodes.get(i).name(), status[i], detail[i], Duration.ofNanos(latencyNanos[i])));
        }
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /** The errors nodes threw, to attach to an exception as suppressed causes. */
  public List<Throwable> errors() {
    lock.lock();
    try {
      List<Throwable> out = new ArrayList<>();
      for (Throwable e : errors) {
        if (e != null) {
          out.add(e);
        }
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  /** How many nodes answered "quarantined". */
  public int quarantined() {
    return count(NodeOutcome.Status.QUARANTINED);
  }

  /** How many nodes answered "no" (refused), as opposed to failing, not answering, or quarantine. */
  public int refusals() {
    return count(NodeOutcome.Status.REFUSED);
  }

  private int count(NodeOutcome.Status wanted) {
    lock.lock();
    try {
      int n = 0;
      for (NodeOutcome.Status s : status) {
        if (s == wanted) {
          n++;
        }
      }
      return n;
    } finally {
      lock.unlock();
    }
  }

}
