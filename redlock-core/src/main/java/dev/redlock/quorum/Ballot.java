package dev.redlock.quorum;

import dev.redlock.NodeOutcome;
import dev.redlock.internal.Exchange;
import dev.redlock.internal.LockNode;
import dev.redlock.internal.Ticker;
import dev.redlock.spi.Tally;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The votes of one request sent to every node, indexed like the node list.
 *
 * <p>The thread that awaits the ballot reads the replies itself: first every reply that has already
 * arrived, then, if the outcome is still open, it waits on the node that has answered fastest
 * lately. It stops as soon as the outcome is decided; replies that arrived by then are read at
 * once, and only nodes still silent are handed to an I/O thread, which reads their reply (within
 * the node timeout) and gives the connection back. So a healthy round costs no thread hand-off, and
 * a slow node costs one, off the caller's path.
 *
 * <p>Requests that had to wait for an earlier request of the same lease on the same node (see
 * {@link FanOut}) are run entirely by I/O threads; the awaiting thread then waits for them.
 *
 * <p>Each node has a "settled" future, completed when that node's request has finished one way or
 * another; a later request on the same lease waits for it, so that, for example, a release never
 * overtakes a straggling {@code SET NX} on the same node.
 */
public final class Ballot implements Tally {
  /** The shortest wait on one silent node before looking at the others (socket timeouts are ms). */
  private static final long MIN_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

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
  private long awaitedUntil = Long.MIN_VALUE;
  private Runnable onDecided; // whenDecided's action, run once
  private int decidingQuorum;

  // The replies the awaiting thread reads itself. Confined to the thread that holds `driving`.
  private final Exchange[] exchanges;
  private final long[] startedAt;
  private final int[] silentSlices;
  private final NodeLatencies latencies;
  private final Executor handOff;
  private final long nodeTimeoutNanos;
  private final AtomicBoolean driving = new AtomicBoolean();

  Ballot(
      List<LockNode> nodes,
      Ticker ticker,
      String refusal,
      NodeLatencies latencies,
      Executor handOff,
      long nodeTimeoutNanos) {
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
    this.exchanges = new Exchange[n];
    this.startedAt = new long[n];
    this.silentSlices = new int[n];
    this.latencies = latencies;
    this.handOff = handOff;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
  }

  /** A request written by the sending thread, for the awaiting thread to read. */
  void inFlight(int node, Exchange exchange, long started) {
    exchanges[node] = exchange;
    startedAt[node] = started;
  }

  /**
   * Marks a node not sent to. Its "settled" future follows {@code before} (the previous request on
   * that node), so a later request still waits for a straggler there.
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
      record(node, NodeOutcome.Status.OK, "", latency, null, reply);
    } else if (reply == 0) {
      record(node, NodeOutcome.Status.REFUSED, refusal, latency, null, 0);
    } else {
      record(
          node,
          NodeOutcome.Status.QUARANTINED,
          "data not trusted yet (restarted, restored, flushed or new): no vote for another "
              + (-reply - 1)
              + " ms",
          latency,
          null,
          0);
    }
  }

  void fail(int node, Throwable error, long latency) {
    record(node, NodeFailures.status(error), NodeFailures.describe(error), latency, error, 0);
  }

  private void record(
      int node, NodeOutcome.Status s, String text, long latency, Throwable error, long value) {
    Runnable decided = null;
    lock.lock();
    try {
      status[node] = s;
      detail[node] = text;
      latencyNanos[node] = latency;
      errors[node] = error;
      values[node] = value;
      answered++;
      if (s == NodeOutcome.Status.OK) {
        ok++;
      }
      changed.signalAll();
      if (onDecided != null && isDecided(decidingQuorum)) {
        decided = onDecided;
        onDecided = null;
      }
    } finally {
      lock.unlock();
    }
    settled.get(node).complete(null);
    if (decided != null) {
      decided.run();
    }
  }

  /**
   * Runs {@code action} once, without any thread waiting: on the thread that records the deciding
   * answer (a quorum said yes, or a quorum is out of reach, or every node answered), or at {@code
   * deadline} by {@link #decideAtDeadline()}, whichever comes first.
   */
  public void whenDecided(int quorum, long deadline, Runnable action) {
    boolean now;
    lock.lock();
    try {
      awaitedUntil = Math.max(awaitedUntil, deadline);
      now = isDecided(quorum);
      if (!now) {
        decidingQuorum = quorum;
        onDecided = action;
      }
    } finally {
      lock.unlock();
    }
    if (now) {
      action.run();
    }
  }

  /** The deadline of {@link #whenDecided}: runs its action now if no answer has yet. */
  public void decideAtDeadline() {
    Runnable decided;
    lock.lock();
    try {
      decided = onDecided;
      onDecided = null;
    } finally {
      lock.unlock();
    }
    if (decided != null) {
      decided.run();
    }
  }

  private boolean isDecided(int quorum) {
    return ok >= quorum || ok + (nodes.size() - answered) < quorum || answered == nodes.size();
  }

  /**
   * Waits until the outcome is decided: {@code quorum} nodes said yes, or so many said no or failed
   * that a quorum is out of reach, or every node answered; or until {@code deadline}.
   *
   * @return the number of nodes that said yes at that moment
   */
  public int awaitQuorum(int quorum, long deadline) throws InterruptedException {
    drive(() -> isDecided(quorum), deadline);
    return yes();
  }

  /**
   * Waits until {@code count} nodes gave a definite answer (yes, no, quarantined, or skipped as
   * known absent), or every node answered, or until {@code deadline}. A release needs no more: once
   * a quorum no longer holds the key, another client can take it.
   */
  public void awaitDefinite(int count, long deadline) throws InterruptedException {
    drive(() -> countDefinite() >= count || answered == nodes.size(), deadline);
  }

  /** Waits until every node answered, or until {@code deadline}. */
  public void awaitAll(long deadline) throws InterruptedException {
    drive(() -> answered == nodes.size(), deadline);
  }

  /**
   * Reads replies (or waits for I/O threads) until {@code done} holds or {@code deadline} passes.
   */
  private void drive(BooleanSupplier done, long deadline) throws InterruptedException {
    boolean reader = driving.compareAndSet(false, true);
    try {
      while (!holds(done)) {
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
        if (reader && readArrived(done)) {
          continue;
        }
        int next = reader ? fastestPending() : -1;
        if (next >= 0) {
          long left = deadline - ticker.read();
          if (left <= 0) {
            break; // replies that have arrived were read above; the rest are handed off below
          }
          // Wait on the likeliest node, but only for a slice: if it is silent (frozen, cut off),
          // the others' replies must not sit unread until the deadline. Each silent slice doubles
          // that node's next one and sends the thread to the other nodes first.
          long slice =
              Math.max(MIN_SLICE_NANOS, 2 * latencies.expected(next)) << silentSlices[next];
          int last = lastReplyLeft(done);
          if (last < 0) {
            continue; // an I/O thread's answer decided it meanwhile: do not block on this node
          } else if (last > 0) {
            read(next, left); // the only reply left anywhere: nothing to turn to, so no slices
          } else if (exchanges[next].awaitReady(Math.min(left, slice))) {
            read(next, Math.max(1, deadline - ticker.read()));
          } else {
            silentSlices[next] = Math.min(silentSlices[next] + 1, 16);
          }
        } else if (!waitForOthers(done, deadline)) {
          break;
        }
      }
    } finally {
      lock.lock();
      try {
        awaitedUntil = Math.max(awaitedUntil, deadline);
      } finally {
        lock.unlock();
      }
      if (reader) {
        handOffRemaining();
        driving.set(false);
      }
    }
  }

  private boolean holds(BooleanSupplier done) {
    lock.lock();
    try {
      return done.getAsBoolean();
    } finally {
      lock.unlock();
    }
  }

  /** Reads every reply that has already arrived; true if any was read. */
  private boolean readArrived(BooleanSupplier done) {
    boolean any = false;
    for (int i = 0; i < exchanges.length; i++) {
      if (exchanges[i] != null && exchanges[i].ready()) {
        read(i, nodeTimeoutNanos);
        any = true;
        if (holds(done)) {
          break;
        }
      }
    }
    return any;
  }

  /**
   * Whether one reply is all that is left: one read by this thread and none coming from an I/O
   * thread (a node's answer there could decide the outcome while this thread waited). Checked with
   * the outcome under one lock, or an answer recorded just before would leave this thread blocked
   * on a silent node after the outcome was decided.
   *
   * @return 1 if so, 0 if other replies may still come, -1 if the outcome is decided
   */
  private int lastReplyLeft(BooleanSupplier done) {
    int mine = 0;
    for (Exchange e : exchanges) {
      if (e != null) {
        mine++;
      }
    }
    lock.lock();
    try {
      if (done.getAsBoolean()) {
        return -1;
      }
      return mine == 1 && answered == nodes.size() - 1 ? 1 : 0;
    } finally {
      lock.unlock();
    }
  }

  /** The pending node to wait on: the fewest silent slices so far, then the fastest lately. */
  private int fastestPending() {
    int best = -1;
    for (int i = 0; i < exchanges.length; i++) {
      if (exchanges[i] != null
          && (best < 0
              || silentSlices[i] < silentSlices[best]
              || (silentSlices[i] == silentSlices[best]
                  && latencies.expected(i) < latencies.expected(best)))) {
        best = i;
      }
    }
    return best;
  }

  private boolean waitForOthers(BooleanSupplier done, long deadline) throws InterruptedException {
    lock.lock();
    try {
      if (done.getAsBoolean()) {
        return true;
      }
      long left = deadline - ticker.read();
      if (left <= 0) {
        return false;
      }
      changed.await(left, TimeUnit.NANOSECONDS);
      return true;
    } finally {
      lock.unlock();
    }
  }

  private void read(int node, long timeoutNanos) {
    Exchange exchange = exchanges[node];
    exchanges[node] = null;
    complete(node, exchange, timeoutNanos);
  }

  private void complete(int node, Exchange exchange, long timeoutNanos) {
    try {
      long reply = exchange.finish(timeoutNanos);
      long took = ticker.read() - startedAt[node];
      latencies.observe(node, took);
      answer(node, reply, took);
    } catch (Throwable e) {
      long took = ticker.read() - startedAt[node];
      latencies.observe(
          node, Math.max(took, nodeTimeoutNanos)); // a failing node is asked last next time
      fail(node, e, took);
      if (e instanceof Error error) {
        throw error;
      }
    }
  }

  /**
   * For a ballot nobody will await (a roll-back sent by an interrupted caller): reads the replies
   * that have arrived and hands the rest to I/O threads, so every connection goes back and every
   * node's request settles. Without it the requests this thread wrote would hold their connections
   * forever.
   */
  public void readInBackground() {
    if (driving.compareAndSet(false, true)) {
      try {
        handOffRemaining();
      } finally {
        driving.set(false);
      }
    }
  }

  /** After the decision: read what has arrived, hand what has not to an I/O thread. */
  private void handOffRemaining() {
    for (int i = 0; i < exchanges.length; i++) {
      Exchange exchange = exchanges[i];
      if (exchange == null) {
        continue;
      }
      exchanges[i] = null;
      if (exchange.ready()) {
        complete(i, exchange, nodeTimeoutNanos);
        continue;
      }
      int node = i;
      long readFor = Math.max(1, startedAt[i] + nodeTimeoutNanos - ticker.read());
      try {
        handOff.execute(() -> complete(node, exchange, readFor));
      } catch (RejectedExecutionException e) {
        complete(node, exchange, readFor); // no thread free (or closing): read it here, bounded
      }
    }
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

  /** Whether every node has answered (or was skipped). */
  public boolean allAnswered() {
    lock.lock();
    try {
      return answered == nodes.size();
    } finally {
      lock.unlock();
    }
  }

  /**
   * How many nodes gave a definite answer: yes, no, quarantined, or skipped as known absent. Call
   * with or without the lock held (it is reentrant).
   */
  public int definite() {
    lock.lock();
    try {
      return countDefinite();
    } finally {
      lock.unlock();
    }
  }

  private int countDefinite() {
    int n = 0;
    for (NodeOutcome.Status s : status) {
      if (isDefinite(s)) {
        n++;
      }
    }
    return n;
  }

  private static boolean isDefinite(NodeOutcome.Status s) {
    return s == NodeOutcome.Status.OK
        || s == NodeOutcome.Status.REFUSED
        || s == NodeOutcome.Status.SKIPPED
        || s == NodeOutcome.Status.QUARANTINED;
  }

  /** Whether {@code node} gave a definite answer (see {@link #definite()}). */
  public boolean definite(int node) {
    lock.lock();
    try {
      return isDefinite(status[node]);
    } finally {
      lock.unlock();
    }
  }

  /** Runs {@code action} once every node's request has settled (at once if they all have). */
  public void whenAllSettled(Runnable action) {
    CompletableFuture.allOf(settled.toArray(new CompletableFuture<?>[0])).thenRun(action);
  }

  /**
   * Whether the node answered a definite "no": for the acquire script that means our token was not
   * written there (held elsewhere, or quarantined).
   */
  public boolean refused(int node) {
    lock.lock();
    try {
      return status[node] == NodeOutcome.Status.REFUSED
          || status[node] == NodeOutcome.Status.SKIPPED
          || status[node] == NodeOutcome.Status.QUARANTINED;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The value a node that said yes returned (for the acquire script, its fencing counter); 0
   * otherwise.
   */
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
      boolean pastDeadline = awaitedUntil != Long.MIN_VALUE && ticker.read() - awaitedUntil >= 0;
      List<NodeOutcome> out = new ArrayList<>(nodes.size());
      for (int i = 0; i < nodes.size(); i++) {
        if (status[i] == null) {
          out.add(
              pastDeadline
                  ? new NodeOutcome(
                      nodes.get(i).name(),
                      NodeOutcome.Status.TIMED_OUT,
                      "no reply within nodeTimeout",
                      Duration.ZERO)
                  : new NodeOutcome(
                      nodes.get(i).name(),
                      NodeOutcome.Status.PENDING,
                      "not awaited: outcome already decided",
                      Duration.ZERO));
        } else {
          out.add(
              new NodeOutcome(
                  nodes.get(i).name(), status[i], detail[i], Duration.ofNanos(latencyNanos[i])));
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

  /**
   * How many nodes answered "no" (refused), as opposed to failing, not answering, or quarantine.
   */
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
