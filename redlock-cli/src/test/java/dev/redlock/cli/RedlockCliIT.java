package dev.redlock.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
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
  @ValueSource(strings = {"", "run", "status", "doctor", "release", "quarantine"})
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

  /** Issue 13, item 5: a ttl that cannot be renewed stops run before the command starts. */
  @Test
  void runWithATtlTooShortToRenewNeverStartsTheCommand() {
    Path ran = dir.resolve("ran");
    Result r = redlock("run", "--ttl", "60ms", "cli:short", "--", "touch", ran.toString());
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains("ttl too short to renew"), r.toString());
    assertFalse(Files.exists(ran), "the command ran without a lease that could be kept");
  }

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

  /** A configuration file for the shared nodes with a key prefix of the test's own. */
  Path configWithPrefix(String prefix) throws Exception {
    Path config = dir.resolve("redlock-" + prefix.replace(":", "") + ".properties");
    Files.writeString(
        config,
        "redlock.nodes=" + nodeList + "\nredlock.keyPrefix=" + prefix + "\nredlock.maxTtl=60s\n");
    return config;
  }

  static String runId(RedisNode node) {
    try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
      return NodeLife.info(jedis, "server").get("run_id");
    }
  }

  static long nodeMicros(RedisNode node) {
    try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
      return NodeLife.nodeMicros(jedis);
    }
  }

  /** Each persistence setting: its verdict, what it means for the restart guard, and the fix. */
  @ParameterizedTest
  @ValueSource(strings = {"aof-always", "aof-everysec", "rdb-only", "none"})
  void doctorSaysWhatEachPersistenceSettingMeansForTheRestartGuard(String setting) {
    RedisNode node = nodes.node(0);
    try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
      switch (setting) {
        case "aof-always" -> {
          jedis.configSet("appendonly", "yes");
          jedis.configSet("appendfsync", "always");
        }
        case "aof-everysec" -> {
          jedis.configSet("appendonly", "yes");
          jedis.configSet("appendfsync", "everysec");
        }
        case "rdb-only" -> jedis.configSet("save", "3600 1");
        default -> {}
      }
      Result r = redlock("doctor");
      String line = check(r, node.uri(), "persistence");
      assertEquals(0, r.status(), "persistence alone never fails with the guard on: " + r);
      switch (setting) {
        case "aof-always" -> {
          assertTrue(
              line.startsWith("ok    ")
                  && line.contains("appendonly yes, appendfsync always")
                  && line.contains("without trustFsyncedAofRestarts (off by default) each restart")
                  && !line.contains("fix:"),
              line + "\n" + r);
        }
        case "aof-everysec" -> {
          assertTrue(line.startsWith("warn  "), line + "\n" + r);
          assertTrue(line.contains("appendfsync everysec: a restart may lose"), line);
          assertTrue(line.contains("up to ~1 s"), line);
          assertTrue(line.contains("sees each restart by run_id"), line);
          assertTrue(line.contains("out of votes for maxTtl (60.0s) after it"), line);
          assertTrue(line.contains("fix: appendfsync always"), line);
        }
        case "rdb-only" -> {
          assertTrue(line.startsWith("warn  "), line + "\n" + r);
          assertTrue(line.contains("RDB snapshots only (save '3600 1', appendonly no)"), line);
          assertTrue(line.contains("reloads an older snapshot"), line);
          assertTrue(line.contains("sees each restart by run_id"), line);
          assertTrue(line.contains("fix: appendonly yes and appendfsync always"), line);
        }
        default -> {
          assertTrue(line.startsWith("warn  "), line + "\n" + r);
          assertTrue(line.contains("no persistence (appendonly no, save '')"), line);
          assertTrue(line.contains("comes back empty"), line);
          assertTrue(line.contains("out of votes for maxTtl (60.0s)"), line);
          assertTrue(line.contains("fix: appendonly yes and appendfsync always"), line);
        }
      }
      assertFalse(line.contains("covered"), line);
    } finally {
      try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
        jedis.configSet("appendonly", "no");
        jedis.configSet("appendfsync", "everysec");
        jedis.configSet("save", "");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"allkeys-lru", "volatile-lru", "volatile-ttl"})
  void doctorFailsEveryPolicyThatCanEvictLockOrFenceKeys(String policy) {
    try (Jedis jedis = new Jedis("127.0.0.1", nodes.node(1).port())) {
      jedis.configSet("maxmemory-policy", policy);
      Result r = redlock("doctor");
      assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
      String line = check(r, nodes.node(1).uri(), "eviction");
      assertTrue(line.startsWith("FAIL  "), line + "\n" + r);
      assertTrue(line.contains("maxmemory-policy " + policy), line);
      assertTrue(line.contains("a lock granted twice"), line);
      assertTrue(
          line.contains(
              policy.startsWith("volatile-")
                  ? "lock keys and fence keys all carry one"
                  : "lock keys, fence keys"),
          line);
      assertTrue(line.contains("fix: CONFIG SET maxmemory-policy noeviction"), line);
      assertTrue(
          check(r, nodes.node(0).uri(), "eviction").startsWith("ok    "),
          "the other nodes pass: " + r);
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
      assertTrue(
          check(r, aof.uris().get(0), "persistence")
              .startsWith("ok    " + aof.uris().get(0) + "  persistence: appendonly yes,"),
          r.toString());

      // Node 0 again, directly rather than through its proxy: another address, the same server.
      Result twice = redlock("", Map.of(), "doctor", "--nodes", list + "," + aof.node(0).uri());
      assertEquals(ExitCodes.CHECK_FAILED, twice.status(), twice.toString());
      assertTrue(
          twice.out().contains("is the same server as " + aof.uris().get(0)), twice.toString());
      assertTrue(twice.out().contains("warn  all nodes  node count: 4 nodes"), twice.toString());
    }
  }

  @Test
  void doctorWarnsThatANodeRefusingConfigGetCountsAsNotDurable() {
    for (RedisNode node : nodes.all()) {
      try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
        jedis.aclSetUser("limited", "on", ">secret", "~*", "+@all", "-config");
      }
    }
    String limited = nodeList.replace("redis://", "redis://limited:secret@");
    Result r = redlock("", Map.of(), "doctor", "--nodes", limited);
    String persistence = check(r, nodes.node(0).uri(), "persistence");
    assertTrue(persistence.startsWith("warn  "), persistence + "\n" + r);
    assertTrue(persistence.contains("CONFIG GET refused"), persistence);
    assertTrue(persistence.contains("durability unknown"), persistence);
    assertTrue(persistence.contains("treats the node as not durable"), persistence);
    assertTrue(persistence.contains("fix: grant the user +config|get"), persistence);
    assertTrue(
        check(r, nodes.node(0).uri(), "eviction").startsWith("?     "), "eviction unknown: " + r);
    assertFalse(r.out().contains("secret"), "no password printed: " + r);
    assertEquals(0, r.status(), "a warning and an unknown are not failures: " + r);
  }

  @Test
  void doctorFailsANodeThatRefusesInfoBecauseItsVoteWouldNeverCount() {
    for (RedisNode node : nodes.all()) {
      try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
        jedis.aclSetUser("noinfo", "on", ">secret", "~*", "+@all", "-info");
      }
    }
    String noInfo = nodeList.replace("redis://", "redis://noinfo:secret@");
    Result r = redlock("", Map.of(), "doctor", "--nodes", noInfo);
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    String line = check(r, nodes.node(2).uri(), "restarts");
    assertTrue(line.startsWith("FAIL  "), line + "\n" + r);
    assertTrue(line.contains("INFO refused"), line);
    assertTrue(line.contains("cannot tell whether the node restarted"), line);
    assertTrue(line.contains("never counts its vote"), line);
    assertTrue(line.contains("fix: grant the user +info"), line);
    assertTrue(
        check(r, nodes.node(2).uri(), "persistence").startsWith("warn  "),
        "the other checks still run: " + r);
  }

  @Test
  void doctorShowsEachNodesLifeAndWhatTheRestartGuardMakesOfItsMarker() throws Exception {
    String prefix = "life:";
    String config = configWithPrefix(prefix).toString();
    RedisNode node = nodes.node(0);
    String uri = node.uri();
    String runId = runId(node);
    try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
      Result none = redlock("", Map.of(), "doctor", "--config", config);
      assertEquals(0, none.status(), none.toString());
      assertTrue(
          check(none, uri, "life")
              .startsWith("info  " + uri + "  life: run_id " + runId.substring(0, 8) + ", up "),
          none.toString());
      assertTrue(
          check(none, uri, "restart guard")
              .startsWith("info  " + uri + "  restart guard: no life marker yet"),
          none.toString());

      String otherLife = "0123456789abcdef0123456789abcdef01234567";
      jedis.set(prefix + "@life", otherLife + ":1:" + (nodeMicros(node) - 3_600_000_000L));
      Result restarted = redlock("", Map.of(), "doctor", "--config", config);
      String line = check(restarted, uri, "restart guard");
      assertTrue(line.startsWith("warn  "), line + "\n" + restarted);
      assertTrue(
          line.contains(
              "restarted since the marker was stamped (marker run_id 01234567, node "
                  + runId.substring(0, 8)
                  + ")"),
          line);
      assertTrue(
          line.contains("the next acquire starts a quarantine of maxTtl (60.0s)"),
          "not durable now (appendonly no), so the old epoch is not adopted: " + line);

      jedis.set(prefix + "@life", runId + ":0:" + (nodeMicros(node) - 120_000_000L));
      Result old = redlock("", Map.of(), "doctor", "--config", config);
      line = check(old, uri, "restart guard");
      assertTrue(line.startsWith("ok    "), line + "\n" + old);
      assertTrue(line.contains("votes (data trusted since"), line);

      jedis.set(prefix + "@life", runId + ":0:" + (nodeMicros(node) - 20_000_000L));
      Result young = redlock("", Map.of(), "doctor", "--config", config);
      line = check(young, uri, "restart guard");
      assertTrue(line.startsWith("warn  "), line + "\n" + young);
      java.util.regex.Matcher left =
          java.util.regex.Pattern.compile("out of votes for ([0-9.]+)s more").matcher(line);
      assertTrue(left.find(), line);
      double seconds = Double.parseDouble(left.group(1));
      assertTrue(seconds > 30 && seconds <= 40, "about 40 s of 60 left: " + line);
      assertEquals(0, young.status(), "a quarantine is a warning: " + young);
    } finally {
      try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
        jedis.del(prefix + "@life");
      }
    }
  }

  @Test
  void doctorReportsThePreviousVersionsKeysAsInformation() throws Exception {
    String prefix = "legacy:";
    String config = configWithPrefix(prefix).toString();
    RedisNode node = nodes.node(2);
    try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
      jedis.set(prefix + "@epoch", "0");
      jedis.hset(prefix + "@fences", prefix + "r", "17");
      Result r = redlock("", Map.of(), "doctor", "--config", config);
      assertEquals(0, r.status(), r.toString());
      String line = check(r, node.uri(), "legacy keys");
      assertTrue(
          line.startsWith(
              "info  "
                  + node.uri()
                  + "  legacy keys: legacy:@epoch, legacy:@fences from the previous version: no"
                  + " longer used once every client runs this version; safe to delete then"),
          line + "\n" + r);
      assertTrue(line.contains("fix: once every client is upgraded: DEL legacy:@epoch"), line);
      assertEquals("", check(r, nodes.node(1).uri(), "legacy keys"), "only where they are: " + r);
    } finally {
      try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
        jedis.del(prefix + "@epoch", prefix + "@fences");
      }
    }
  }

  @Test
  void doctorFailsAnUnreachableNode() {
    Result r = redlock("", Map.of(), "doctor", "--nodes", nodeList + ",redis://127.0.0.1:1");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    assertTrue(r.out().contains("FAIL  redis://127.0.0.1:1  reachable: "), r.toString());
  }

  // ---- quarantine

  static String life(RedisNode node, String prefix) {
    try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
      return jedis.get(prefix + "@life");
    }
  }

  static void forget(String prefix) {
    for (RedisNode node : nodes.all()) {
      try (Jedis jedis = new Jedis("127.0.0.1", node.port())) {
        jedis.del(prefix + "@life");
      }
    }
  }

  @Test
  void quarantineStampsTheNodesRunIdAndClockAndTheDoctorSeesTheQuarantine() throws Exception {
    String prefix = "quarantine:";
    String config = configWithPrefix(prefix).toString();
    RedisNode node = nodes.node(1);
    try {
      long before = nodeMicros(node);
      // slf4j-simple writes the audit line to System.err itself, not to the CLI's err stream.
      ByteArrayOutputStream auditLog = new ByteArrayOutputStream();
      PrintStream systemErr = System.err;
      Result r;
      System.setErr(new PrintStream(auditLog, true, StandardCharsets.UTF_8));
      try {
        r =
            redlock(
                "",
                Map.of(),
                "quarantine",
                "--config",
                config,
                "--yes",
                "--reason",
                "restored an old dump",
                "--node",
                node.uri());
      } finally {
        System.setErr(systemErr);
      }
      String audit = auditLog.toString(StandardCharsets.UTF_8);
      long after = nodeMicros(node);
      assertEquals(0, r.status(), r.toString());
      String marker = life(node, prefix);
      String[] parts = marker.split(":");
      assertEquals(3, parts.length, marker);
      assertEquals(runId(node), parts[0], "the node's own run_id");
      assertEquals("0", parts[1], "not durable: a later restart does not adopt it");
      long epoch = Long.parseLong(parts[2]);
      assertTrue(before <= epoch && epoch <= after, before + " <= " + epoch + " <= " + after);
      assertTrue(
          r.out().contains("stamped quarantine:@life = " + marker + " on " + node.uri()),
          r.toString());
      assertTrue(r.out().contains("out of votes until "), r.toString());
      assertTrue(audit.contains("WARN dev.redlock.audit - quarantine node=" + node.uri()), audit);
      assertTrue(audit.contains("reason=\"restored an old dump\""), audit);
      assertTrue(audit.contains("marker=" + marker), audit);
      assertNull(life(nodes.node(0), prefix), "only that node");
      assertNull(life(nodes.node(2), prefix), "only that node");

      Result doctor = redlock("", Map.of(), "doctor", "--config", config);
      String line = check(doctor, node.uri(), "restart guard");
      assertTrue(line.startsWith("warn  ") && line.contains("quarantined"), line + "\n" + doctor);

      Result byPosition =
          redlock("", Map.of(), "quarantine", "--config", config, "--yes", "--node", "3");
      assertEquals(0, byPosition.status(), byPosition.toString());
      assertTrue(
          life(nodes.node(2), prefix).startsWith(runId(nodes.node(2)) + ":0:"),
          "position 3 is the third node: " + byPosition);
    } finally {
      forget(prefix);
    }
  }

  @Test
  void quarantineAsksForTheNodesAddressAndChangesNothingWithoutIt() throws Exception {
    String prefix = "ask:";
    String config = configWithPrefix(prefix).toString();
    RedisNode node = nodes.node(0);
    try {
      Result declined =
          redlock("nope\n", Map.of(), "quarantine", "--config", config, "--node", node.uri());
      assertEquals(ExitCodes.CHECK_FAILED, declined.status(), declined.toString());
      assertTrue(declined.out().contains("Type the node's host:port"), declined.toString());
      assertTrue(
          declined.err().contains("not confirmed; nothing was changed"), declined.toString());
      assertNull(life(node, prefix), "nothing stamped: " + declined);

      Result noAnswer =
          redlock("", Map.of(), "quarantine", "--config", config, "--node", node.uri());
      assertEquals(ExitCodes.CHECK_FAILED, noAnswer.status(), noAnswer.toString());
      assertNull(life(node, prefix), "nothing stamped: " + noAnswer);

      Result confirmed =
          redlock(
              "127.0.0.1:" + node.port() + "\n",
              Map.of(),
              "quarantine",
              "--config",
              config,
              "--node",
              node.uri());
      assertEquals(0, confirmed.status(), confirmed.toString());
      assertTrue(life(node, prefix).startsWith(runId(node) + ":0:"), confirmed.toString());
    } finally {
      forget(prefix);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"redis://127.0.0.1:1", "0", "4", "redis://127.0.0.1:notaport", ""})
  void quarantineOfANodeNotInTheListIsAUsageError(String bad) throws Exception {
    String prefix = "bad:";
    String config = configWithPrefix(prefix).toString();
    try {
      Result r = redlock("", Map.of(), "quarantine", "--config", config, "--yes", "--node", bad);
      assertEquals(ExitCodes.USAGE, r.status(), r.toString());
      assertTrue(r.err().contains("--node"), r.toString());
      for (RedisNode node : nodes.all()) {
        assertNull(life(node, prefix), "nothing stamped: " + r);
      }
    } finally {
      forget(prefix);
    }
    Result missing = redlock("quarantine", "--yes");
    assertEquals(ExitCodes.USAGE, missing.status(), missing.toString());
    assertTrue(missing.err().contains("--node"), missing.toString());
  }
}
