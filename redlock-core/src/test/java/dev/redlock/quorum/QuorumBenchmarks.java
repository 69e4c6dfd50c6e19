package dev.redlock.quorum;

import dev.redlock.node.Exchange;
import dev.redlock.node.LockNode;
import dev.redlock.node.NodeRequest;
import dev.redlock.timing.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The in-process part of a vote, without the network: sending a verb to five nodes and collecting
 * their votes (with nodes that answer at once, on the calling thread). Core's own microbenchmarks,
 * beside the package-private types they measure; how to run them: docs/performance.md ("In-process
 * microbenchmarks").
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class QuorumBenchmarks {
  private FanOut fanOut;

  /** A node that answers yes at once, with a fencing counter. */
  static final class InstantNode implements LockNode {
    private final String name;
    private long counter = 1;

    InstantNode(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Exchange begin(NodeRequest request) {
      long reply = counter++;
      return new Exchange() {
        @Override
        public boolean ready() {
          return true;
        }

        @Override
        public long finish(long timeoutNanos) {
          return reply;
        }
      };
    }

    @Override
    public void close() {}
  }

  @Setup
  public void setUp() {
    List<LockNode> nodes = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      nodes.add(new InstantNode("redis://bench:" + i));
    }
    fanOut =
        new FanOut(
            nodes,
            Runnable::run,
            Ticker.SYSTEM,
            1_000_000_000L,
            new NodeStates(nodes.size(), 1, java.time.Duration.ofMinutes(1)));
  }

  @Benchmark
  public int voteOnFiveNodes() throws InterruptedException {
    Ballot ballot =
        fanOut.send(
            new NodeRequest(NodeRequest.Verb.ACQUIRE, "redlock:bench", "token", 30_000),
            "held",
            null,
            null);
    return ballot.awaitQuorum(3, System.nanoTime() + 1_000_000);
  }
}
