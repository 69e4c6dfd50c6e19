package dev.redlock.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockStatus;
import dev.redlock.Redlock;
import dev.redlock.RedlockAdmin;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Tools;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

/** The command line against real nodes: every command and every exit status. */
class RedlockCliIT {
  static final Duration NO_HANG = Duration.ofSeconds(30);
  static RedisNodes nodes;
  static String nodeList;

  @TempDir Path dir;

  @BeforeAll
  static void startNodes() {
    nodes = Tools.requireOrSkip(() -> RedisNodes.start(3, RedisBinary.locate(), Persistence.NONE));
    NodeData.vouchForNewNodes(nodes);
    nodeList = String.join(",", nodes.uris());
  }

  @AfterAll
  static void stopNodes() {
    if (nodes != null) {
      nodes.close();
    }
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

  // ---- usage errors

  @ParameterizedTest
  @ValueSource(strings = {"", "run", "status", "doctor", "release"})
  void everyCommandHasHelpWithExamples(String command) {
    Result r = command.isEmpty() ? redlock("--help") : redlock(command, "--help");
    assertEquals(0, r.status(), r.toString());
    assertTrue(r.out().contains("Examples:"), r.toString());
  }

  @Test
  void noNodesAnywhereIsAUsageErrorThatSaysWhereNodesComeFrom() {
    Result r = redlock("", Map.of(), "status", "r");
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains("no nodes: give --nodes"), r.toString());
  }

  @Test
  void aBadNodeListIsAUsageErrorNamingTheNode() {
    Result r = redlock("status", "--nodes", "redis://127.0.0.1:notaport", "r");
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains("notaport"), r.toString());
  }

  @Test
  void badFlagsAreUsageErrors() {
    assertEquals(ExitCodes.USAGE, redlock("status", "--bogus", "r").status());
    assertEquals(ExitCodes.USAGE, redlock("run", "--ttl", "5x", "r", "--", "true").status());
    assertEquals(ExitCodes.USAGE, redlock("run", "r").status(), "a command is required");
    Result zero = redlock("run", "--ttl", "0s", "r", "--", "true");
    assertEquals(ExitCodes.USAGE, zero.status(), zero.toString());
    assertTrue(zero.err().contains("ttl"), zero.toString());
  }

  @Test
  void nodesFromAConfigFileAndFromTheFlagOverridingIt() throws Exception {
    Path config = dir.resolve("redlock.properties");
    Files.writeString(config, "redlock.nodes=" + nodeList + "\nredlock.nodeTimeout=200ms\n");
    Result fromFile = redlock("", Map.of(), "status", "--config", config.toString(), "cfg");
    assertEquals(0, fromFile.status(), fromFile.toString());
    assertTrue(fromFile.out().contains("cfg: FREE"), fromFile.toString());

    Files.writeString(config, "redlock.nodes=" + nodeList + "\nredlock.bogus=1\n");
    Result bad = redlock("", Map.of(), "status", "--config", config.toString(), "cfg");
    assertEquals(ExitCodes.USAGE, bad.status(), bad.toString());
    assertTrue(bad.err().contains("redlock.bogus"), bad.toString());

    Result missing =
        redlock("", Map.of(), "status", "--config", dir.resolve("nope").toString(), "x");
    assertEquals(ExitCodes.USAGE, missing.status(), missing.toString());
  }

  // ---- run

  @Test
  void runHoldsTheLockPassesTheTokenAndExitsWithTheCommandsStatus() throws Exception {
    Path token = dir.resolve("token");
    Path go = dir.resolve("go");
    CompletableFuture<Result> run =
        CompletableFuture.supplyAsync(
            () ->
                redlock(
                    "run",
                    "--ttl",
                    "2s",
                    "cli:run",
                    "--",
                    "sh",
                    "-c",
                    "echo \"$REDLOCK_RESOURCE $REDLOCK_FENCING_TOKEN\" > "
                        + token
                        + "; while [ ! -f "
                        + go
                        + " ]; do sleep 0.05; done; exit 3"));
    await().atMost(NO_HANG).until(() -> Files.exists(token));
    assertEquals(LockStatus.Verdict.HELD, verdict("cli:run"), "held while the command runs");
    Files.writeString(go, "");
    Result r = run.get(NO_HANG.toSeconds(), TimeUnit.SECONDS);
    assertEquals(3, r.status(), r.toString());
    String[] seen = Files.readString(token).trim().split(" ");
    assertEquals("cli:run", seen[0]);
    assertTrue(Long.parseLong(seen[1]) > 0, "a fencing token: " + seen[1]);
    assertEquals(LockStatus.Verdict.FREE, verdict("cli:run"), "released when the command exits");
  }

  @Test
  void runGivesUpWithItsOwnStatusWhenTheLockIsHeldElsewhere() throws Exception {
    try (Redlock holder = client();
        Lease held = holder.acquire("cli:busy", Duration.ofSeconds(10), NO_HANG)) {
      Result r = redlock("run", "--wait", "300ms", "cli:busy", "--", "true");
      assertEquals(ExitCodes.NOT_ACQUIRED, r.status(), r.toString());
      assertTrue(r.err().contains("held elsewhere"), r.toString());
      assertTrue(held.isValid());
    }
  }

  @Test
  void aCommandThatDoesNotExistIs127() {
    Result r = redlock("run", "cli:missing", "--", dir.resolve("no-such-command").toString());
    assertEquals(ExitCodes.NOT_FOUND, r.status(), r.toString());
    assertEquals(LockStatus.Verdict.FREE, verdict("cli:missing"), "nothing left held");
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aLostLeaseStopsTheCommandAndExitsWithItsOwnStatus(boolean ignoresSigterm) throws Exception {
    Path pidFile = dir.resolve("pid");
    // The command writes its pid and then waits; one variant ignores SIGTERM (SIGKILL after grace).
    String script =
        (ignoresSigterm ? "trap '' TERM; " : "")
            + "echo $$ > "
            + pidFile
            + "; while :; do sleep 0.1; done";
    CompletableFuture<Result> run =
        CompletableFuture.supplyAsync(
            () ->
                redlock(
                    "run",
                    "--ttl",
                    "1s",
                    "--grace",
                    "500ms",
                    "cli:lost",
                    "--",
                    "sh",
                    "-c",
                    script));
    await()
        .atMost(NO_HANG)
        .until(() -> Files.exists(pidFile) && !Files.readString(pidFile).isBlank());
    long pid = Long.parseLong(Files.readString(pidFile).trim());
    List<RedisNode> frozen = new ArrayList<>(List.of(nodes.node(0), nodes.node(1)));
    frozen.forEach(RedisNode::pause); // a majority: renewal fails, the lease is lost
    try {
      Result r = run.get(NO_HANG.toSeconds(), TimeUnit.SECONDS);
      assertEquals(ExitCodes.LEASE_LOST, r.status(), r.toString());
      assertTrue(r.err().contains("lost the lease on 'cli:lost'"), r.toString());
      if (ignoresSigterm) {
        assertTrue(r.err().contains("SIGKILL"), r.toString());
      }
      assertFalse(
          ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
          "the command (pid " + pid + ") was stopped");
    } finally {
      frozen.forEach(RedisNode::resume);
    }
  }

  // ---- status

  @Test
  void statusShowsHolderTtlFenceAndVerdictPerNodeAndAsJson() throws Exception {
    try (Redlock holder = client();
        Lease held = holder.acquire("cli:status", Duration.ofSeconds(20), NO_HANG)) {
      Result r = redlock("status", "cli:status", "cli:other");
      assertEquals(0, r.status(), r.toString());
      assertTrue(r.out().contains("cli:status: HELD by "), r.toString());
      assertTrue(r.out().contains("cli:other: FREE"), r.toString());
      assertTrue(
          r.out()
              .matches(
                  "(?s).*held  ttl [0-9.]+s  owner [0-9a-f]{8}  fence "
                      + held.fencingToken()
                      + ".*"),
          r.toString());

      Result json = redlock("status", "--json", "cli:status");
      assertEquals(0, json.status(), json.toString());
      assertTrue(
          json.out().startsWith("[{\"resource\":\"cli:status\",\"verdict\":\"HELD\""),
          json.toString());
      assertTrue(json.out().contains("\"fencingCounter\":" + held.fencingToken()), json.toString());
    }
  }

  @Test
  void statusReportsAnUnreachableNodeWithoutFailing() {
    Result r =
        redlock(
            "", Map.of(), "status", "--nodes", nodeList + ",redis://127.0.0.1:1", "cli:partial");
    assertEquals(0, r.status(), r.toString());
    assertTrue(r.out().contains("redis://127.0.0.1:1  unreachable: "), r.toString());
  }

  // ---- release --force

  @Test
  void releaseAsksForTheResourceNameAndOnlyThenBreaksTheLock() throws Exception {
    try (Redlock holder = client()) {
      Lease held = holder.acquire("cli:stuck", Duration.ofSeconds(30), NO_HANG);
      Map<String, String> env = Map.of("REDLOCK_NODES", nodeList);
      Result declined = redlock("nope\n", env, "release", "--force", "cli:stuck");
      assertEquals(ExitCodes.CHECK_FAILED, declined.status(), declined.toString());
      assertEquals(LockStatus.Verdict.HELD, verdict("cli:stuck"));

      Result confirmed =
          redlock("cli:stuck\n", env, "release", "--force", "--reason", "host died", "cli:stuck");
      assertEquals(0, confirmed.status(), confirmed.toString());
      assertTrue(confirmed.out().contains("deleted"), confirmed.toString());
      assertEquals(LockStatus.Verdict.FREE, verdict("cli:stuck"));
      assertFalse(
          held.isValid() && held.extend(Duration.ofSeconds(5)), "the old holder cannot extend");
    }
  }

  @Test
  void releaseWithYesDoesNotAsk() throws Exception {
    try (Redlock holder = client()) {
      holder.acquire("cli:yes", Duration.ofSeconds(30), NO_HANG);
      Result r = redlock("release", "--force", "--yes", "cli:yes");
      assertEquals(0, r.status(), r.toString());
      assertEquals(LockStatus.Verdict.FREE, verdict("cli:yes"));
    }
  }

  // ---- doctor

  @Test
  void doctorFlagsNoPersistenceAndAnEvictingPolicy() {
    try (Jedis jedis = new Jedis("127.0.0.1", nodes.node(1).port())) {
      jedis.configSet("maxmemory-policy", "allkeys-lru");
      Result r = redlock("doctor");
      assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
      assertTrue(
          r.out()
              .contains(
                  "FAIL  " + nodes.node(1).uri() + "  eviction: maxmemory-policy allkeys-lru"),
          r.toString());
      assertTrue(
          r.out().contains("warn  " + nodes.node(0).uri() + "  persistence: appendonly no"),
          r.toString());
      assertTrue(r.out().contains("fix: CONFIG SET maxmemory-policy noeviction"), r.toString());
    } finally {
      try (Jedis jedis = new Jedis("127.0.0.1", nodes.node(1).port())) {
        jedis.configSet("maxmemory-policy", "noeviction");
      }
    }
  }

  @Test
  void doctorPassesAWellSetUpClusterAndFlagsOneServerListedTwice() {
    try (FaultyNodes aof = Tools.requireOrSkip(() -> FaultyNodes.start(3, Persistence.AOF))) {
      String list = String.join(",", aof.uris());
      Result r = redlock("", Map.of(), "doctor", "--nodes", list);
      assertEquals(0, r.status(), r.toString());
      assertTrue(r.out().contains("doctor: no check failed"), r.toString());
      assertTrue(r.out().contains("3 distinct servers"), r.toString());

      // Node 0 again, directly rather than through its proxy: another address, the same server.
      Result twice = redlock("", Map.of(), "doctor", "--nodes", list + "," + aof.node(0).uri());
      assertEquals(ExitCodes.CHECK_FAILED, twice.status(), twice.toString());
      assertTrue(
          twice.out().contains("is the same server as " + aof.uris().get(0)), twice.toString());
      assertTrue(twice.out().contains("warn  all nodes  node count: 4 nodes"), twice.toString());
    }
  }

  @Test
  void doctorSaysUnknownWhenConfigGetIsRefused() {
    for (RedisNode node : nodes.all()) {
      try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
        jedis.aclSetUser("limited", "on", ">secret", "~*", "+@all", "-config");
      }
    }
    String limited = nodeList.replace("redis://", "redis://limited:secret@");
    Result r = redlock("", Map.of(), "doctor", "--nodes", limited);
    assertTrue(
        r.out().contains("?     " + nodes.node(0).uri() + "  persistence: CONFIG GET refused"),
        r.toString());
    assertTrue(r.out().contains("eviction: CONFIG GET refused"), r.toString());
    assertFalse(r.out().contains("secret"), "no password printed: " + r);
    assertEquals(0, r.status(), "unknown is not a failure: " + r);
  }

  @Test
  void doctorFailsAnUnreachableNode() {
    Result r = redlock("", Map.of(), "doctor", "--nodes", nodeList + ",redis://127.0.0.1:1");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    assertTrue(r.out().contains("FAIL  redis://127.0.0.1:1  reachable: "), r.toString());
  }
}
