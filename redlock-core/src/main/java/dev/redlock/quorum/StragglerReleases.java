package dev.redlock.quorum;

import dev.redlock.node.LockNode;
import dev.redlock.node.NodeRequest;
import dev.redlock.timing.Ticker;
import dev.redlock.timing.Timers;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Releases a node did not confirm, sent again until it does.
 *
 * <p>Why: a node that was frozen (SIGSTOP, a stalled VM, a link that holds traffic) runs the {@code
 * SET NX} we gave up on when it thaws, with its full ttl counted from then. Our release, sent while
 * it was frozen, failed or was lost. Nobody would delete that orphan key, and on a node that others
 * need for their quorum it blocks the resource for a whole ttl. So every release a node did not
 * confirm is kept here, per node, and sent again — first after twice the node timeout, then backing
 * off to 2 s while the node stays silent — until the node has answered it twice (once is not
 * enough: on thaw a new connection's release may run just before the old connection's SET). The
 * release is owner-checked, so sending it again can only delete our own token.
 *
 * <p>Bounded: at most {@value #MAX_PER_NODE} releases wait per node; past that the oldest is
 * dropped (its key, if it ever appears, waits out its ttl, as without this class). No thread of its
 * own: the lease timer schedules, an I/O thread sends.
 */
final class StragglerReleases {
  static final int MAX_PER_NODE = 10_000;
  private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(2);
  private static final Logger log = LoggerFactory.getLogger(StragglerReleases.class);

  private final List<LockNode> nodes;
  private final Timers timer;
  private final Executor io;
  private final Ticker ticker;
  private final long nodeTimeoutNanos;
  private final PerNode[] perNode;
  private volatile boolean closed;

  StragglerReleases(
      List<LockNode> nodes, Timers timer, Executor io, Ticker ticker, long nodeTimeoutNanos) {
    this.nodes = nodes;
    this.timer = timer;
    this.io = io;
    this.ticker = ticker;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
    this.perNode = new PerNode[nodes.size()];
    for (int i = 0; i < perNode.length; i++) {
      perNode[i] = new PerNode(i);
    }
  }

  /** Keeps {@code request}, the release sent, for every node that did not confirm it. */
  void keepUnconfirmed(Ballot release, NodeRequest request) {
    for (int i = 0; i < release.size(); i++) {
      if (!release.definite(i)) {
        perNode[i].add(new Pending(request));
      }
    }
  }

  void close() {
    closed = true;
  }

  /** A release to send again; {@code confirmations} counts definite answers. */
  private static final class Pending {
    final NodeRequest release;
    int confirmations;

    Pending(NodeRequest release) {
      this.release = release;
    }
  }

  private final class PerNode {
    final int node;
    final ArrayDeque<Pending> queue = new ArrayDeque<>();
    boolean scheduled;
    long backoff = baseDelay();
    long droppedSinceLastWarn;
    boolean warnedErrorReply;

    PerNode(int node) {
      this.node = node;
    }

    synchronized void add(Pending pending) {
      if (closed) {
        return;
      }
      if (queue.size() >= MAX_PER_NODE) {
        queue.pollFirst();
        if (droppedSinceLastWarn++ == 0) {
          log.warn(
              "node {} has not confirmed {} releases; dropping the oldest: a key it sets late may"
                  + " wait out its ttl",
              nodes.get(node).name(),
              MAX_PER_NODE);
        }
      }
      queue.addLast(pending);
      scheduleLocked();
    }

    private void scheduleLocked() {
      if (!scheduled && !queue.isEmpty() && !closed) {
        scheduled = true;
        try {
          timer.at(ticker.read() + backoff, this::dispatch);
        } catch (RejectedExecutionException e) {
          scheduled = false; // closing
        }
      }
    }

    private void dispatch() {
      try {
        io.execute(this::sweep);
      } catch (RejectedExecutionException e) {
        synchronized (this) {
          scheduled = false; // closing, or every I/O thread busy: try again later
          scheduleLocked();
        }
      }
    }

    /** Sends every waiting release once; stops at the first the node does not answer. */
    private void sweep() {
      List<Pending> batch;
      synchronized (this) {
        batch = new ArrayList<>(queue);
      }
      boolean silent = false;
      List<Pending> done = new ArrayList<>();
      for (Pending p : batch) {
        if (closed) {
          return;
        }
        try {
          nodes.get(node).begin(p.release).finish(nodeTimeoutNanos);
          if (++p.confirmations >= 2) {
            done.add(p);
          }
        } catch (JedisDataException e) {
          if (transientReply(e)) {
            silent = true; // BUSY, LOADING: the node is there, just not now
            break;
          }
          // An error reply (NOPERM, WRONGTYPE, ...): sending it again cannot help, and it must not
          // hold up the releases queued behind it.
          done.add(p);
          if (!warnedErrorReply) {
            warnedErrorReply = true;
            log.warn(
                "node {} answers a re-sent release of {} with an error ({}); dropped, so its key"
                    + " there waits out its ttl (logged once per node)",
                nodes.get(node).name(),
                p.release.key(),
                e.getMessage());
          }
        } catch (RuntimeException e) {
          silent = true;
          break;
        }
      }
      synchronized (this) {
        queue.removeAll(done);
        backoff = silent ? Math.min(MAX_BACKOFF_NANOS, backoff * 2) : baseDelay();
        scheduled = false;
        if (!done.isEmpty() && log.isDebugEnabled()) {
          log.debug("node {} confirmed {} late release(s)", nodes.get(node).name(), done.size());
        }
        scheduleLocked();
      }
    }
  }

  private static boolean transientReply(JedisDataException e) {
    String message = String.valueOf(e.getMessage());
    return message.startsWith("BUSY") || message.startsWith("LOADING");
  }

  private long baseDelay() {
    return Math.max(TimeUnit.MILLISECONDS.toNanos(20), 2 * nodeTimeoutNanos);
  }
}
