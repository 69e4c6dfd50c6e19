package dev.redlock.quorum;

import dev.redlock.NodeOutcome;
import dev.redlock.NodeOutcome.Status;
import dev.redlock.node.Exchange;
import dev.redlock.node.LockNode;
import dev.redlock.spi.Tally;
import dev.redlock.timing.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * The tally of one request sent to every node, indexed like the node list: what each node answered,
 * how many said yes, and when the outcome is decided (a quorum said yes, a quorum is out of reach,
 * or every node answered). Replies are read by the ballot's {@link ReplyReader} (requests the
 * sending thread wrote) or by I/O threads (the rest), and recorded here; when each node's request
 * has finished is {@link Settlements}'s.
 */
final class Ballot implements Tally, RequestOrder.Preceding {
  private final List<LockNode> nodes;
  private final Ticker ticker;
  private final String refusal;
  private final Status[] status;
  private final NodeStates standing;
  private final boolean acquisition; // only an acquisition shows whether a node votes
  private final String[] detail;
  private final long[] latencyNanos;
  private final long[] values;
  private Throwable[] errors; // guarded by lock; made by the first failure
  private final ReentrantLock lock = new ReentrantLock();
  private Condition changed; // guarded by lock; made by the first awaitChange
  private final Settlements settlements;

  private final ReplyReader reader;
  private final NodeLatencies latencies;
  private final long nodeTimeoutNanos;
  private int ok;
  private int answered;
  private long awaitedUntil = Long.MIN_VALUE;
  private Runnable onDecided; // whenDecided's action, run once
  private int decidingQuorum;

  Ballot(
      List<LockNode> nodes,
      Ticker ticker,
      String refusal,
      NodeLatencies latencies,
      Executor handOff,
      long nodeTimeoutNanos,
      NodeStates standing,
      boolean acquisition) {
    int n = nodes.size();
    this.standing = standing;
    this.acquisition = acquisition;
    this.nodes = nodes;
    this.ticker = ticker;
    this.refusal = refusal;
    this.status = new Status[n];
    this.detail = new String[n];
    this.latencyNanos = new long[n];
    this.values = new long[n];
    this.settlements = new Settlements(n);
    this.reader = new ReplyReader(this, n, ticker, latencies, handOff, nodeTimeoutNanos);
    this.latencies = latencies;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
  }

  /** A request written by the sending thread, for the awaiting thread to read. */
  void inFlight(int node, Exchange exchange, long started) {
    reader.inFlight(node, exchange, started);
  }

  /**
   * Marks a node not sent to. Its "settled" future follows {@code before} (the previous request on
   * that node), so a later request still waits for a straggler there.
   */
  void skip(int node, CompletableFuture<Void> before) {
    skip(node, before, "not sent: known not to hold the key, or not needed");
  }

  /** {@link #skip(int, CompletableFuture)}, saying why in the per-node account. */
  void skip(int node, CompletableFuture<Void> before, String why) {
    Runnable decided = note(node, Status.SKIPPED, why, 0, null, 0); // can decide a renewal
    wakeWatcher();
    if (decided != null) {
      decided.run();
    }
    if (before == null || before.isDone()) {
      settlements.settle(node);
    } else {
      before.whenComplete((ignored, error) -> settlements.settle(node));
    }
  }

  /** The thread parked until this ballot changes (see {@link ReplyReader}), if any. */
  volatile Thread watcher;

  private void wakeWatcher() {
    Thread w = watcher;
    if (w != null) {
      LockSupport.unpark(w);
    }
  }

  void answer(int node, long reply, long latency) {
    if (reply > 0) {
      record(node, Status.OK, "", latency, null, reply);
    } else if (reply == 0) {
      record(node, Status.REFUSED, refusal, latency, null, 0);
    } else {
      record(node, Status.QUARANTINED, NodeFailures.quarantined(-reply - 1), latency, null, 0);
    }
  }

  /** {@link #answer} to a request started at {@code started}, and the node's latency. */
  void answerStartedAt(int node, long reply, long started) {
    long took = ticker.read() - started;
    latencies.observe(node, took);
    answer(node, reply, took);
  }

  /** {@link #fail} of a request started at {@code started} (see {@link NodeLatencies#observe}). */
  void failStartedAt(int node, Throwable error, long started) {
    long took = ticker.read() - started;
    latencies.observe(node, Math.max(took, nodeTimeoutNanos));
    fail(node, error, took);
  }

  void fail(int node, Throwable error, long latency) {
    record(node, NodeFailures.status(error), NodeFailures.describe(error), latency, error, 0);
  }

  /** {@link #fail}, unless the node's outcome is recorded already (it must count only once). */
  void failIfOpen(int node, Throwable error) {
    if (!holds(() -> status[node] != null)) {
      fail(node, error, 0);
    }
  }

  private void record(int node, Status s, String text, long latency, Throwable error, long value) {
    Runnable decided = note(node, s, text, latency, error, value);
    standing.record(node, nodes.get(node), s, text, acquisition);
    wakeWatcher();
    settlements.settle(node);
    if (decided != null) {
      decided.run();
    }
  }

  /**
   * Records the node's outcome under the lock; returns {@link #whenDecided}'s action if now due.
   */
  private Runnable note(
      int node, Status s, String text, long latency, Throwable error, long value) {
    lock.lock();
    try {
      status[node] = s;
      detail[node] = text;
      latencyNanos[node] = latency;
      if (error != null || errors != null) {
        if (errors == null) {
          errors = new Throwable[nodes.size()];
        }
        errors[node] = error;
      }
      values[node] = value;
      answered++;
      if (s == Status.OK) {
        ok++;
      }
      if (changed != null) {
        changed.signalAll();
      }
      Runnable decided = null;
      if (onDecided != null && isDecided(decidingQuorum)) {
        decided = onDecided;
        onDecided = null;
      }
      return decided;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Runs {@code action} once, without any thread waiting: on the thread that records the deciding
   * answer, or at {@code deadline} by {@link #decideAtDeadline()}, whichever comes first.
   */
  void whenDecided(int quorum, long deadline, Runnable action) {
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
  void decideAtDeadline() {
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

  /** Waits until the outcome is decided, or until {@code deadline}; returns {@link #yes()} then. */
  int awaitQuorum(int quorum, long deadline) throws InterruptedException {
    reader.readUntil(() -> isDecided(quorum), deadline);
    return yes();
  }

  /**
   * Waits until {@code count} nodes gave a {@link #definite() definite} answer, or every node
   * answered, or until {@code deadline}: all a release waits for ({@link QuorumStore#giveBack}).
   */
  void awaitDefinite(int count, long deadline) throws InterruptedException {
    reader.readUntil(() -> countDefinite() >= count || answered == nodes.size(), deadline);
  }

  void awaitAll(long deadline) throws InterruptedException {
    reader.readUntil(() -> answered == nodes.size(), deadline);
  }

  /** Whether {@code done} holds, evaluated under the lock. */
  boolean holds(BooleanSupplier done) {
    lock.lock();
    try {
      return done.getAsBoolean();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether one reply is all that is left: {@code pendingWithReader} is 1 (the one the reader will
   * read) and none is coming from an I/O thread (a node's answer there could decide the outcome
   * while the reader waited). Checked with the outcome under one lock, or an answer recorded just
   * before would leave the reader blocked on a silent node after the outcome was decided.
   *
   * @return 1 if so, 0 if other replies may still come, -1 if the outcome is decided
   */
  int lastReplyLeft(BooleanSupplier done, int pendingWithReader) {
    lock.lock();
    try {
      if (done.getAsBoolean()) {
        return -1;
      }
      return pendingWithReader == 1 && answered == nodes.size() - 1 ? 1 : 0;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits for an answer to be recorded, until {@code deadline}; false if the deadline had passed.
   */
  boolean awaitChange(BooleanSupplier done, long deadline) throws InterruptedException {
    lock.lock();
    try {
      if (done.getAsBoolean()) {
        return true;
      }
      long left = deadline - ticker.read();
      if (left <= 0) {
        return false;
      }
      if (changed == null) {
        changed = lock.newCondition();
      }
      changed.await(left, TimeUnit.NANOSECONDS);
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Someone awaited the ballot until {@code deadline}: silent nodes are then "timed out". */
  void awaitedUntil(long deadline) {
    lock.lock();
    try {
      awaitedUntil = Math.max(awaitedUntil, deadline);
    } finally {
      lock.unlock();
    }
  }

  /** See {@link ReplyReader#readInBackground}. */
  void readInBackground() {
    reader.readInBackground();
  }

  @Override
  public int yes() {
    lock.lock();
    try {
      return ok;
    } finally {
      lock.unlock();
    }
  }

  boolean allAnswered() {
    return holds(() -> answered == nodes.size());
  }

  /** How many nodes gave a definite answer: yes, no, quarantined, or skipped as known absent. */
  int definite() {
    lock.lock();
    try {
      return countDefinite();
    } finally {
      lock.unlock();
    }
  }

  private int countDefinite() {
    int n = 0;
    for (Status s : status) {
      if (isDefinite(s)) {
        n++;
      }
    }
    return n;
  }

  private static boolean isDefinite(Status s) {
    return s == Status.OK || s == Status.REFUSED || s == Status.SKIPPED || s == Status.QUARANTINED;
  }

  /** Whether {@code node} gave a definite answer (see {@link #definite()}). */
  boolean definite(int node) {
    return holds(() -> isDefinite(status[node]));
  }

  /** See {@link Settlements#whenAll}. */
  void whenAllSettled(Runnable action) {
    settlements.whenAll(action);
  }

  /**
   * Whether the node answered a definite "no": for the acquire script that means our token was not
   * written there (held elsewhere, or quarantined). Releases skip such nodes: a new definite status
   * must not mean "may hold our key" (REFUSED, SKIPPED and QUARANTINED do not).
   */
  boolean refused(int node) {
    return holds(() -> status[node] != Status.OK && isDefinite(status[node]));
  }

  /**
   * The value a node that said yes returned (for the acquire script, its fencing counter); 0
   * otherwise.
   */
  long value(int node) {
    lock.lock();
    try {
      return status[node] == Status.OK ? values[node] : 0;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public int size() {
    return nodes.size();
  }

  @Override
  public CompletableFuture<Void> settled(int node) {
    return settlements.of(node);
  }

  @Override
  public List<NodeOutcome> outcomes() {
    lock.lock();
    try {
      boolean pastDeadline = awaitedUntil != Long.MIN_VALUE && ticker.read() - awaitedUntil >= 0;
      List<NodeOutcome> out = new ArrayList<>(nodes.size());
      for (int i = 0; i < nodes.size(); i++) {
        String name = nodes.get(i).name();
        if (status[i] != null) {
          out.add(new NodeOutcome(name, status[i], detail[i], Duration.ofNanos(latencyNanos[i])));
        } else if (pastDeadline) {
          out.add(
              new NodeOutcome(
                  name, Status.TIMED_OUT, "no reply within nodeTimeout", Duration.ZERO));
        } else {
          out.add(
              new NodeOutcome(
                  name, Status.PENDING, "not awaited: outcome already decided", Duration.ZERO));
        }
      }
      return out;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public List<Throwable> errors() {
    lock.lock();
    try {
      List<Throwable> out = new ArrayList<>();
      if (errors != null) {
        for (Throwable e : errors) {
          if (e != null) {
            out.add(e);
          }
        }
      }
      return out;
    } finally {
      lock.unlock();
    }
  }
}
