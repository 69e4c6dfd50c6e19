package dev.redlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.RedisNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

/** {@code redlock quarantine}: the restart guard's keys deleted, asked and refused. */
class CliQuarantineIT extends CliITBase {
  /**
   * {@code redlock quarantine ARGS} with the configuration of {@link #configWithPrefix}, answering
   * its question with {@code input}.
   */
  Result quarantineWithPrefix(String prefix, String input, String... args) throws Exception {
    List<String> all = new ArrayList<>(List.of("quarantine", "--config", configWithPrefix(prefix)));
    all.addAll(List.of(args));
    return redlock(input, Map.of(), all.toArray(String[]::new));
  }

  static String life(RedisNode node, String prefix) {
    try (Jedis jedis = on(node)) {
      return jedis.get(prefix + "@life");
    }
  }

  /** Vouches for {@code node} under {@code prefix}: its marker and witness, trusted now. */
  static void vouch(RedisNode node, String prefix) {
    dev.redlock.testkit.NodeData.vouchForNewNode(node, prefix);
  }

  @Test
  void quarantineDeletesTheGuardsKeysAndTheNextAcquireKeepsTheNodeOut() throws Exception {
    String prefix = "quarantine:";
    RedisNode node = nodes.node(1);
    vouch(node, prefix);
    String marker = life(node, prefix);
    // slf4j-simple writes the audit line to System.err itself, not to the CLI's err stream.
    ByteArrayOutputStream auditLog = new ByteArrayOutputStream();
    PrintStream systemErr = System.err;
    Result r;
    System.setErr(new PrintStream(auditLog, true, StandardCharsets.UTF_8));
    try {
      r =
          quarantineWithPrefix(
              prefix, "", "--yes", "--reason", "swapped in a copy", "--node", node.uri());
    } finally {
      System.setErr(systemErr);
    }
    String audit = auditLog.toString(StandardCharsets.UTF_8);
    assertEquals(0, r.status(), r.toString());
    assertTrue(r.out().contains("never replaced since: votes"), "what it was: " + r);
    assertNull(life(node, prefix), "the marker is gone");
    try (Jedis jedis = on(node)) {
      assertFalse(jedis.exists(prefix + "@witness"), "the witness is gone");
    }
    assertTrue(
        r.out()
            .contains(
                "deleted quarantine:@life and quarantine:@witness on "
                    + node.uri()
                    + ": out of votes for maxTtl from the next acquire"),
        r.toString());
    assertSays(
        audit,
        "WARN dev.redlock.audit - quarantine node=" + node.uri(),
        "reason=\"swapped in a copy\"",
        "previous=" + marker);

    try (Redlock client =
        Redlock.create(RedlockConfig.builder().nodes(nodes.uris()).keyPrefix(prefix).build())) {
      client.tryAcquire("r", Duration.ofSeconds(10)).ifPresent(Lease::release);
    } catch (dev.redlock.LockUnavailableException quarantined) {
      // expected: the other nodes have no marker for this prefix either
    }
    Result doctor = doctorWithPrefix(prefix);
    String line = check(doctor, node.uri(), "restart guard");
    assertTrue(line.startsWith("warn  ") && line.contains("quarantined"), line + "\n" + doctor);

    vouch(nodes.node(2), prefix);
    Result byPosition = quarantineWithPrefix(prefix, "", "--yes", "--node", "3");
    assertEquals(0, byPosition.status(), byPosition.toString());
    assertNull(life(nodes.node(2), prefix), "position 3 is the third node: " + byPosition);
  }

  @Test
  void quarantineAsksForTheNodesAddressAndChangesNothingWithoutIt() throws Exception {
    String prefix = "ask:";
    RedisNode node = nodes.node(0);
    vouch(node, prefix);
    Result declined = quarantineWithPrefix(prefix, "nope\n", "--node", node.uri());
    assertEquals(ExitCodes.CHECK_FAILED, declined.status(), declined.toString());
    assertTrue(declined.out().contains("Type the node's host:port"), declined.toString());
    assertTrue(declined.err().contains("not confirmed; nothing was changed"), declined.toString());
    assertNotNull(life(node, prefix), "nothing deleted: " + declined);

    Result noAnswer = quarantineWithPrefix(prefix, "", "--node", node.uri());
    assertEquals(ExitCodes.CHECK_FAILED, noAnswer.status(), noAnswer.toString());
    assertNotNull(life(node, prefix), "nothing deleted: " + noAnswer);

    Result confirmed =
        quarantineWithPrefix(prefix, "127.0.0.1:" + node.port() + "\n", "--node", node.uri());
    assertEquals(0, confirmed.status(), confirmed.toString());
    assertNull(life(node, prefix), confirmed.toString());
  }

  @ParameterizedTest
  @ValueSource(strings = {"redis://127.0.0.1:1", "0", "4", "redis://127.0.0.1:notaport", ""})
  void quarantineOfANodeNotInTheListIsAUsageError(String bad) throws Exception {
    String prefix = "bad:";
    Result r = quarantineWithPrefix(prefix, "", "--yes", "--node", bad);
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains("--node"), r.toString());
    for (RedisNode node : nodes.all()) {
      assertNull(life(node, prefix), "nothing written: " + r);
    }
    Result missing = redlock("quarantine", "--yes");
    assertEquals(ExitCodes.USAGE, missing.status(), missing.toString());
    assertTrue(missing.err().contains("--node"), missing.toString());
  }
}
