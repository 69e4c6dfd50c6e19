package dev.redlock.cli;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Redlock;
import dev.redlock.admin.LockStatus;
import dev.redlock.admin.RedlockAdmin;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import redis.clients.jedis.Jedis;

/**
 * The command line against real nodes, in-process: the nodes and helpers every CLI IT shares. Each
 * subclass gets three nodes of its own: the one static fixture below starts them before the
 * subclass's tests and stops them after (the classes run one after another, JUnit's default).
 */
abstract class CliITBase {
  static final Duration NO_HANG = Duration.ofSeconds(30);

  /** Three nodes for the class: running, empty and vouched for before each test. */
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  static RedisNodes nodes;
  static String nodeList;

  @TempDir Path dir;

  @BeforeAll
  static void nameTheNodes() {
    nodes = redis.nodes();
    nodeList = String.join(",", nodes.uris());
  }

  /** What one invocation printed and returned. */
  record Result(int status, String out, String err) {
    @Override
    public String toString() {
      return "exit " + status + "\n--- out:\n" + out + "\n--- err:\n" + err;
    }
  }

  static Result redlock(String input, Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        RedlockCli.execute(
            args,
            env,
            new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static Result redlock(String... args) {
    return redlock("", Map.of("REDLOCK_NODES", nodeList), args);
  }

  static Redlock client() {
    return Redlock.create(
        RedlockConfig.builder().nodes(nodes.uris()).nodeTimeout(Duration.ofMillis(200)).build());
  }

  static LockStatus.Verdict verdict(String resource) {
    try (RedlockAdmin admin =
        RedlockAdmin.create(RedlockConfig.builder().nodes(nodes.uris()).build())) {
      return admin.status(resource).verdict();
    }
  }

  /** The doctor's line for one check on one node (and its fix line), or "" if there is none. */
  static String check(Result r, String node, String what) {
    String[] lines = r.out().split("\n");
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].contains("  " + node + "  " + what + ": ")) {
        boolean fix = i + 1 < lines.length && lines[i + 1].startsWith("        fix: ");
        return lines[i] + (fix ? "\n" + lines[i + 1] : "");
      }
    }
    return "";
  }

  /**
   * A configuration file for the shared nodes with a key prefix of the test's own (written again at
   * each call: the same file).
   */
  String configWithPrefix(String prefix) throws Exception {
    Path config = dir.resolve("redlock-" + prefix.replace(":", "") + ".properties");
    Files.writeString(
        config,
        "redlock.nodes=" + nodeList + "\nredlock.keyPrefix=" + prefix + "\nredlock.maxTtl=60s\n");
    return config.toString();
  }

  /** {@code redlock doctor} with the configuration of {@link #configWithPrefix}. */
  Result doctorWithPrefix(String prefix) throws Exception {
    return redlock("", Map.of(), "doctor", "--config", configWithPrefix(prefix));
  }

  /** Asserts that {@code line} says each of {@code phrases}. */
  static void assertSays(String line, String... phrases) {
    for (String phrase : phrases) {
      assertTrue(line.contains(phrase), "'" + phrase + "' missing from: " + line);
    }
  }

  /** A connection of the test's own to {@code node}. */
  static Jedis on(RedisNode node) {
    return new Jedis("127.0.0.1", node.port());
  }

  static long nodeMicros(RedisNode node) {
    try (Jedis jedis = on(node)) {
      return NodeLife.nodeMicros(jedis);
    }
  }
}
