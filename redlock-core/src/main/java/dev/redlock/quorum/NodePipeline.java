package dev.redlock.quorum;

import dev.redlock.node.LockNode;
import dev.redlock.node.NodeRequest;
import dev.redlock.timing.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One node's queue of requests nobody waits on (renewals): while one batch is in flight, new
 * requests gather for the next, which goes out pipelined on one connection ({@link
 * LockNode#runAll}) as soon as the first is answered. So a node that answers late costs one I/O
 * thread and one connection however many leases renew, and a thousand renewals cost about one round
 * trip, not a thousand threads' worth of waiting.
 */
final class NodePipeline {
  /** The most requests in one batch: bounds one write and one node's burst of work. */
  private static final int MAX_BATCH = 512;

  private final int node;
  private final LockNode lockNode;
  private final Executor drains;
  private final Ticker ticker;
  private final long nodeTimeoutNanos;
  private final NodeLatencies latencies;
  private final ConcurrentLinkedQueue<Entry> queue = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean draining = new AtomicBoolean();

  private record Entry(Ballot ballot, NodeRequest request, long queuedAt) {}

  NodePipeline(
      int node,
      LockNode lockNode,
      Executor drains,
      Ticker ticker,
      long nodeTimeoutNanos,
      NodeLatencies latencies) {
    this.node = node;
    this.lockNode = lockNode;
    this.drains = drains;
    this.ticker = ticker;
    this.nodeTimeoutNanos = nodeTimeoutNanos;
    this.latencies = latencies;
  }

  /** Queues {@code request}; its outcome is recorded in {@code ballot}. Never waits. */
  void add(Ballot ballot, NodeRequest request) {
    queue.add(new Entry(ballot, request, ticker.read()));
    if (draining.compareAndSet(false, true)) {
      try {
        drains.execute(this::drain); // a thread per node at most, queued: never refused but closed
      } catch (RejectedExecutionException e) {
        draining.set(false);
        failQueued(new RejectedExecutionException("not sent: the Redlock was closed", e));
      }
    }
  }

  private void drain() {
    do {
      try {
        while (!queue.isEmpty()) {
          List<Entry> batch = nextBatch();
          try {
            send(batch);
          } catch (RuntimeException | Error e) {
            // Whatever escaped (a reply's consumer, an Error): these requests are settled, failed,
            // and the pipeline goes on, or their leases' later requests would wait forever.
            for (Entry entry : batch) {
              entry.ballot.fail(node, e, ticker.read() - entry.queuedAt);
            }
            if (e instanceof Error error) {
              throw error;
            }
          }
        }
      } finally {
        draining.set(false);
      }
    } while (!queue.isEmpty() && draining.compareAndSet(false, true));
  }

  /**
   * Takes what is queued; what waited a whole node timeout is failed, not sent (its vote is in).
   */
  private List<Entry> nextBatch() {
    List<Entry> batch = new ArrayList<>();
    long now = ticker.read();
    Entry e;
    while (batch.size() < MAX_BATCH && (e = queue.poll()) != null) {
      if (now - e.queuedAt >= nodeTimeoutNanos) {
        e.ballot.fail(
            node,
            new RuntimeException(
                "not sent: waited a node timeout behind this node's earlier requests",
                new TimeoutException()),
            now - e.queuedAt);
      } else {
        batch.add(e);
      }
    }
    return batch;
  }

  private void send(List<Entry> batch) {
    if (batch.isEmpty()) {
      return;
    }
    List<NodeRequest> requests = new ArrayList<>(batch.size());
    for (Entry e : batch) {
      requests.add(e.request);
    }
    long start = ticker.read();
    boolean[] observed = {false};
    lockNode.runAll(
        requests,
        nodeTimeoutNanos,
        new LockNode.Replies() {
          // One latency sample per batch: a big batch's last reply measures the batch, not the
          // node, and must not make a quick node look like one that times out.
          @Override
          public void answered(int index, long reply) {
            long took = ticker.read() - batch.get(index).queuedAt;
            if (!observed[0]) {
              observed[0] = true;
              latencies.observe(node, ticker.read() - start);
            }
            batch.get(index).ballot.answer(node, reply, took);
          }

          @Override
          public void failed(int index, RuntimeException error) {
            long took = ticker.read() - batch.get(index).queuedAt;
            if (!observed[0]) {
              observed[0] = true;
              latencies.observe(node, Math.max(ticker.read() - start, nodeTimeoutNanos));
            }
            batch.get(index).ballot.fail(node, error, took);
          }
        });
  }

  private void failQueued(RuntimeException why) {
    Entry e;
    while ((e = queue.poll()) != null) {
      e.ballot.fail(node, why, 0);
    }
  }
}
