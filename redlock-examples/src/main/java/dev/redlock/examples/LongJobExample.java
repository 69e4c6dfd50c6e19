package dev.redlock.examples;

import dev.redlock.LeaseLostException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisNodes;
import java.io.PrintStream;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.TimeUnit;

/**
 * A settlement job that runs far longer than its ttl under {@link Redlock#withLock}: the lease is
 * renewed while it works, and the job checks it right before every write. Halfway through, two of
 * three nodes freeze (SIGSTOP): the lease is lost, the job's thread is interrupted, and the job
 * stops instead of writing without the lock. That is the reaction this example teaches.
 *
 * <p>Run: {@code ./mvnw -q install -DskipTests && ./mvnw -q -pl redlock-examples exec:java
 * -Dexec.mainClass=dev.redlock.examples.LongJobExample}
 */
public final class LongJobExample {
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
  private final PrintStream out;

  LongJobExample(PrintStream out) {
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    new LongJobExample(System.out).run();
  }

  /** Runs the job on three local nodes; returns how many batches it wrote before it stopped. */
  int run() throws Exception {
    try (RedisNodes nodes = RedisNodes.start(3)) {
      NodeData.vouchForNewNodes(
          nodes); // new nodes never held a lock: no need to wait out the restart guard
      RedlockConfig config =
          RedlockConfig.builder().nodes(nodes.uris()).nodeTimeout(Duration.ofMillis(100)).build();
      Duration ttl = Duration.ofSeconds(1);
      say(
          "3 local nodes; ttl "
              + ttl.toMillis()
              + " ms, renewed every "
              + (long) (ttl.toMillis() * config.renewalFraction())
              + " ms");
      try (Redlock redlock = Redlock.create(config)) {
        return redlock.withLock(
            "payouts:2026-11-29",
            ttl,
            Duration.ofSeconds(5),
            lease -> {
              lease.onLost(loss -> say("onLost: " + loss.reason() + " — " + loss.getMessage()));
              int written = 0;
              try {
                for (int batch = 1; batch <= 40; batch++) {
                  TimeUnit.MILLISECONDS.sleep(100); // prepare the batch: a query, a call to a bank
                  lease.checkValid(); // right before the side effect: throws if the lease is gone
                  written++;
                  say(
                      "batch "
                          + batch
                          + " written (validity left "
                          + lease.remainingValidity().toMillis()
                          + " ms)");
                  if (batch == 20) {
                    say("fault: freezing 2 of 3 nodes; the next renewal cannot reach a quorum");
                    nodes.node(0).pause();
                    nodes.node(1).pause();
                  }
                }
              } catch (InterruptedException | LeaseLostException e) {
                // The right reaction: stop, write nothing more, let the next holder redo what is
                // left.
                say(
                    "job stopped after "
                        + written
                        + " batches: "
                        + e.getClass().getSimpleName()
                        + "; nothing is written without the lock");
              } finally {
                nodes.node(0).resume();
                nodes.node(1).resume();
              }
              return written;
            });
      }
    }
  }

  private void say(String line) {
    synchronized (out) {
      out.println(LocalTime.now().format(CLOCK) + "  " + line);
    }
  }
}
