package dev.redlock.quorum;

import dev.redlock.node.Exchange;
import dev.redlock.timing.Ticker;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Reads the replies of one request that the sending thread wrote itself ({@link FanOut}), and
 * records them in the request's {@link Ballot}.
 *
 * <p>The thread that awaits the ballot reads: first every reply that has already arrived, then, if
 * the outcome is still open, it waits on the node that has answered fastest lately, a slice at a
 * time; when every reply still to come is being read by another thread (the node's connections are
 * shared), it parks until one is in or a connection has nobody reading it. It stops as soon as the
 * outcome is decided; replies that arrived by then are read at once, and the rest are recorded when
 * whoever reads their connection next reads them ({@link Exchange#finishLater}). So a healthy round
 * costs no thread hand-off, and a slow node costs none on the caller's path. Replies that I/O
 * threads read are recorded by them; the awaiting thread then only waits for the ballot to change.
 */
final class ReplyReader {
  /** The shortest wait on one silent node before looking at the others (socket timeouts are ms). */
  private static final long MIN_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** The longest park before looking again, should a wake-up be missed: a bound, not a poll. */
  private static final long MAX_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private final Ballot ballot;
  private final Ticker ticker;
  private final NodeLatencies latencies;
  private final Executor handOff;
  private final long nodeTimeoutNanos;

  private volatile boolean reading; // a thread reads this ballot's replies now (one at a time)

  private static final VarHandle READING;

  static {
    try {
      READING = MethodHandles.lookup().findVarHandle(ReplyReader.class, "reading", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  // Confined to the thread that holds `reading` (and to the sending thread before any awaits).
  private final Exchange[] exchanges;
  private final long[] startedAt;
  private int[] silentSlices; // made once a node is silent for a slice: most rounds never are

  ReplyReader(
      Ballot ballot,
      int nodes,
      Ticker ticker,
      NodeLatencies latencies,
      Executor handOff,
      long nodeTimeoutNanos) {
    this.ballot = ballot;
    this.ticker = ticker;
    this.latencies = latencies;
    this.handOff = handOff;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
    this.exchanges = new Exchange[nodes];
    this.startedAt = new long[nodes];
  }

  void inFlight(int node, Exchange exchange, long started) {
    exchanges[node] = exchange;
    startedAt[node] = started;
  }

  /**
   * Reads replies (or waits for I/O threads) until {@code done} holds or {@code deadline} passes;
   * {@code done} is evaluated under the ballot's lock. One thread reads at a time; another that
   * awaits the same ballot meanwhile only waits for it to change.
   */
  void readUntil(BooleanSupplier done, long deadline) throws InterruptedException {
    boolean reader = READING.compareAndSet(this, false, true);
    try {
      while (!ballot.holds(done)) {
        if (Thread.interrupted()) {
          throw new InterruptedException();
        }
        // The one reply left is read next (or waited for, if another thread reads its connection),
        // and that read takes what has come before it waits, even past its deadline: a look first
        // would only ask the socket twice.
        int last = reader ? ballot.lastReplyLeft(done, pendingHere()) : 0;
        if (last < 0 || (last == 0 && reader && readArrived(done))) {
          continue;
        }
        int next = reader ? fastestPending() : -1;
        boolean parkHere = next < 0 && reader && pendingHere() > 0;
        if (next < 0 && !parkHere) {
          if (!ballot.awaitChange(done, deadline)) {
            break; // every reply still to come is an I/O thread's
          }
          continue;
        }
        long left = deadline - ticker.read();
        if (left <= 0) {
          if (readArrivedAtDeadline(done)) {
            continue;
          }
          break; // replies that have arrived were read; the rest are handed off below
        }
        if (parkHere) {
          parkUntilProgress(done, Math.min(left, MAX_PARK_NANOS));
        } else {
          // Wait on the likeliest node, but only for a slice: if it is silent (frozen, cut off),
          // the others' replies must not sit unread until the deadline. Each silent slice doubles
          // that node's next one and sends the thread to the other nodes first.
          long slice =
              Math.max(MIN_SLICE_NANOS, 2 * latencies.expected(next)) << silentSlices(next);
          last = ballot.lastReplyLeft(done, pendingHere());
          if (last < 0) {
            continue; // an I/O thread's answer decided it meanwhile: do not block on this node
          } else if (last > 0) {
            // The only reply left anywhere: nothing to turn to, so no slices.
            read(next, Math.max(1, deadline - ticker.read()));
          } else if (exchanges[next].awaitReady(Math.min(left, slice))) {
            read(next, Math.max(1, deadline - ticker.read()));
          } else {
            if (silentSlices == null) {
              silentSlices = new int[exchanges.length];
            }
            silentSlices[next] = Math.min(silentSlices[next] + 1, 16);
          }
        }
      }
    } finally {
      ballot.awaitedUntil(deadline);
      if (reader) {
        handOffRemaining();
        reading = false;
      }
    }
  }

  /**
   * For a ballot nobody will await (a roll-back sent by an interrupted caller): reads what has
   * arrived and hands the rest off, or the requests this thread wrote would hold their connections
   * forever and never settle.
   */
  void readInBackground() {
    if (READING.compareAndSet(this, false, true)) {
      try {
        handOffRemaining();
      } finally {
        reading = false;
      }
    }
  }

  /**
   * When the deadline has passed with the outcome open: reads every reply already in a socket that
   * nobody reads now, even those queued behind other callers' replies on a shared connection,
   * without waiting for any node; true if any was read (then the loop looks again, so it ends: each
   * look that reads takes at least one request off this round's list). A caller kept off the CPU
   * past its deadline (a collection, a throttled container, a loaded machine) finds its replies
   * there, and they still count: the lease's validity runs from the attempt's start, whenever the
   * verdict comes.
   */
  private boolean readArrivedAtDeadline(BooleanSupplier done) {
    boolean any = false;
    for (int i = 0; i < exchanges.length && !ballot.holds(done); i++) {
      if (exchanges[i] != null && exchanges[i].readIfArrived()) {
        read(i, nodeTimeoutNanos); // answered: finish() does not wait
        any = true;
      }
    }
    return any;
  }

  /** Reads every reply that has already arrived; true if any was read. */
  private boolean readArrived(BooleanSupplier done) {
    boolean any = false;
    for (int i = 0; i < exchanges.length; i++) {
      if (exchanges[i] != null && exchanges[i].ready()) {
        read(i, nodeTimeoutNanos);
        any = true;
        if (ballot.holds(done)) {
          break;
        }
      }
    }
    return any;
  }

  private int pendingHere() {
    int mine = 0;
    for (Exchange e : exchanges) {
      if (e != null) {
        mine++;
      }
    }
    return mine;
  }

  /**
   * Parks until one of this thread's requests is answered, one of their connections has nobody
   * reading it, the ballot changes, or {@code nanos} pass: woken, not polling.
   */
  private void parkUntilProgress(BooleanSupplier done, long nanos) {
    Thread me = Thread.currentThread();
    ballot.watcher = me;
    for (Exchange e : exchanges) {
      if (e != null) {
        e.wakeOnProgress(me);
      }
    }
    try {
      // Registered first, then checked: whatever happens after this check wakes us.
      if (!ballot.holds(done) && !anyReadyOrFree()) {
        boolean interrupted = Thread.interrupted();
        LockSupport.parkNanos(this, nanos);
        if (interrupted) {
          me.interrupt(); // seen at the top of the loop
        }
      }
    } finally {
      ballot.watcher = null;
      for (Exchange e : exchanges) {
        if (e != null) {
          e.wakeOnProgress(null);
        }
      }
    }
  }

  private boolean anyReadyOrFree() {
    for (Exchange e : exchanges) {
      if (e != null && (e.ready() || !e.readByAnother())) {
        return true;
      }
    }
    return false;
  }

  /**
   * The pending node to wait on: the fewest silent slices so far, then the fastest lately; none
   * whose connection another thread is reading (that thread hands us the reply).
   */
  private int fastestPending() {
    int best = -1;
    for (int i = 0; i < exchanges.length; i++) {
      if (exchanges[i] != null
          && !exchanges[i].readByAnother()
          && (best < 0
              || silentSlices(i) < silentSlices(best)
              || (silentSlices(i) == silentSlices(best)
                  && latencies.expected(i) < latencies.expected(best)))) {
        best = i;
      }
    }
    return best;
  }

  private int silentSlices(int node) {
    return silentSlices == null ? 0 : silentSlices[node];
  }

  private void read(int node, long timeoutNanos) {
    Exchange exchange = exchanges[node];
    exchanges[node] = null;
    complete(node, exchange, timeoutNanos);
  }

  private void complete(int node, Exchange exchange, long timeoutNanos) {
    try {
      ballot.answerStartedAt(node, exchange.finish(timeoutNanos), startedAt[node]);
    } catch (Throwable e) {
      ballot.failStartedAt(node, e, startedAt[node]);
      if (e instanceof Error error) {
        throw error;
      }
    }
  }

  /**
   * After the decision: reads what has arrived, and leaves the rest to whoever reads next. Every
   * exchange is handed off even if an {@code Error} comes from one (thrown after the last): a look
   * at a request that found no reply left its connection's drain to this hand-off.
   */
  private void handOffRemaining() {
    Error first = null;
    for (int i = 0; i < exchanges.length; i++) {
      Exchange exchange = exchanges[i];
      if (exchange == null) {
        continue;
      }
      exchanges[i] = null;
      try {
        handOff(i, exchange);
      } catch (Error e) {
        if (first == null) {
          first = e;
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  private void handOff(int node, Exchange exchange) {
    if (exchange.ready()) {
      complete(node, exchange, nodeTimeoutNanos);
      return;
    }
    long started = startedAt[node];
    long readFor = Math.max(1, started + nodeTimeoutNanos - ticker.read());
    exchange.finishLater(
        readFor,
        handOff,
        new Exchange.Outcome() {
          @Override
          public void answered(long reply) {
            ballot.answerStartedAt(node, reply, started);
          }

          @Override
          public void failed(RuntimeException error) {
            ballot.failStartedAt(node, error, started);
          }
        });
  }
}
