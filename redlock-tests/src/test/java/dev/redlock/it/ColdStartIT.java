package dev.redlock.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.testkit.RedisFixture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A new client's first attempt (issue 16, item 5): a one-shot job's only {@code tryAcquire}, on
 * healthy nodes, must not be lost to connection setup. Before, {@code Redlock.create} opened
 * nothing and the first attempt raced its connections against the 50 ms default {@code
 * nodeTimeout}: on this machine a cold JVM's first attempt failed in 3 of 3 runs ("quorum
 * unreachable", every node OK after 27-55 ms). Now {@code create} starts connecting to every node
 * and the first attempt waits for those connections ({@code connectTimeout}).
 */
class ColdStartIT extends RealNodesTest {
  ColdStartIT() {
    super(RedisFixture.nodes(3));
  }

  @Test
  void aColdJvmsOneTryAcquireWinsOnHealthyNodes() throws Exception {
    for (int run = 0; run < 5; run++) {
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add(OneShotJob.class.getName());
      command.add(resource() + ":" + run);
      command.addAll(nodes.uris());
      Process job = new ProcessBuilder(command).redirectErrorStream(true).start();
      try {
        assertTrue(job.waitFor(60, TimeUnit.SECONDS), "the one-shot job did not end");
        String said = new String(job.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, job.exitValue(), "run " + run + ": " + said);
        assertTrue(said.contains("acquired"), said);
      } finally {
        job.destroyForcibly();
      }
    }
  }

  /**
   * A node frozen from the start (SIGSTOP: it accepts the TCP connection, never answers the
   * handshake) costs the first attempt its own vote, not the connect timeout: once a quorum is
   * connected the attempt waits at most a node timeout more.
   */
  @Test
  void aNodeFrozenFromTheStartDoesNotHoldUpTheFirstAttempt() {
    nodes.node(2).pause();
    try {
      Redlock redlock = client(config().connectTimeout(Duration.ofSeconds(30)).build());
      Optional<Lease> lease =
          assertTimeoutPreemptively(
              Duration.ofSeconds(10), () -> redlock.tryAcquire(resource(), Duration.ofSeconds(10)));
      assertTrue(lease.isPresent(), "won on the two nodes that answer");
      lease.get().release();
    } finally {
      nodes.node(2).resume();
    }
  }
}
