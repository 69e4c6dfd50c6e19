package dev.redlock.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

/** {@code redlock doctor}: every check, its verdict and its fix. */
class CliDoctorIT extends CliITBase {
  /**
   * Asserts that the doctor's {@code line} (in {@code r}) is a {@code level} that says each of
   * {@code phrases}.
   */
  static void assertLine(String line, String level, Result r, String... phrases) {
    assertTrue(line.startsWith(level), line + "\n" + r);
    assertSays(line, phrases);
  }

  /**
   * {@code redlock doctor} on every node as {@code user} (password {@code secret}), made on every
   * node with every command but {@code denied} (an ACL rule such as {@code -info}).
   */
  static Result doctorAs(String user, String denied) {
    for (RedisNode node : nodes.all()) {
      try (Jedis jedis = on(node)) {
        jedis.aclSetUser(user, "on", ">secret", "~*", "+@all", denied);
      }
    }
    String asUser = nodeList.replace("redis://", "redis://" + user + ":secret@");
    return redlock("", Map.of(), "doctor", "--nodes", asUser);
  }

  static String runId(RedisNode node) {
    try (Jedis jedis = on(node)) {
      return NodeLife.info(jedis, "server").get("run_id");
    }
  }

  /** Each persistence setting: its verdict, what it means for the restart guard, and the fix. */
  @ParameterizedTest
  @ValueSource(strings = {"aof-always", "aof-everysec", "rdb-only", "none"})
  void doctorSaysWhatEachPersistenceSettingMeansForTheRestartGuard(String setting) {
    RedisNode node = nodes.node(0);
    try (Jedis jedis = on(node)) {
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
                  && line.contains(
                      "without restartGuard=trust_fsynced_aof_restarts (not the default) each restart")
                  && !line.contains("fix:"),
              line + "\n" + r);
        }
        case "aof-everysec" -> {
          assertLine(
              line,
              "warn  ",
              r,
              "appendfsync everysec: a restart may lose",
              "up to ~1 s",
              "sees each restart by run_id",
              "out of votes for maxTtl (60.0s) after it",
              "fix: appendfsync always");
        }
        case "rdb-only" -> {
          assertLine(
              line,
              "warn  ",
              r,
              "RDB snapshots only (save '3600 1', appendonly no)",
              "reloads an older snapshot",
              "sees each restart by run_id",
              "fix: appendonly yes and appendfsync always");
        }
        default -> {
          assertLine(
              line,
              "warn  ",
              r,
              "no persistence (appendonly no, save '')",
              "comes back empty",
              "out of votes for maxTtl (60.0s)",
              "fix: appendonly yes and appendfsync always");
        }
      }
      assertFalse(line.contains("covered"), line);
    } finally {
      try (Jedis jedis = on(node)) {
        jedis.configSet("appendonly", "no");
        jedis.configSet("appendfsync", "everysec");
        jedis.configSet("save", "");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"allkeys-lru", "volatile-lru", "volatile-ttl"})
  void doctorFailsEveryPolicyThatCanEvictLockOrFenceKeys(String policy) {
    try (Jedis jedis = on(nodes.node(1))) {
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
      try (Jedis jedis = on(nodes.node(1))) {
        jedis.configSet("maxmemory-policy", "noeviction");
      }
    }
  }

  @Test
  void doctorPassesAWellSetUpClusterAndFlagsOneServerListedTwice() {
    try (FaultyNodes aof =
        redis.startBehindProxies(RedisFixture.nodes(3).persistence(Persistence.AOF))) {
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
    Result r = doctorAs("limited", "-config");
    String persistence = check(r, nodes.node(0).uri(), "persistence");
    assertLine(
        persistence,
        "warn  ",
        r,
        "CONFIG GET refused",
        "durability unknown",
        "treats the node as not durable",
        "fix: grant the user +config|get");
    assertTrue(
        check(r, nodes.node(0).uri(), "eviction").startsWith("?     "), "eviction unknown: " + r);
    assertFalse(r.out().contains("secret"), "no password printed: " + r);
    assertEquals(0, r.status(), "a warning and an unknown are not failures: " + r);
  }

  @Test
  void doctorWarnsThatAUserWithoutSortedSetCommandsCannotTakeReadWriteLocks() {
    Result r = doctorAs("nozset", "-zadd");
    String line = check(r, nodes.node(1).uri(), "permissions (read-write locks)");
    assertLine(
        line,
        "warn  ",
        r,
        "every read-write lock acquisition would fail",
        "fix: if you use read-write locks, grant the user +zadd");
    assertTrue(
        check(r, nodes.node(1).uri(), "permissions").startsWith("ok    "),
        "plain locks are still allowed: " + r);
    assertEquals(0, r.status(), "a warning is not a failure: " + r);
  }

  @Test
  void doctorFailsANodeThatRefusesInfoBecauseItsVoteWouldNeverCount() {
    Result r = doctorAs("noinfo", "-info");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    String line = check(r, nodes.node(2).uri(), "restarts");
    assertLine(
        line,
        "FAIL  ",
        r,
        "INFO refused",
        "cannot tell whether the node restarted",
        "never counts its vote",
        "fix: grant the user +info");
    assertTrue(
        check(r, nodes.node(2).uri(), "persistence").startsWith("warn  "),
        "the other checks still run: " + r);
    assertTrue(
        check(r, nodes.node(2).uri(), "version")
            .startsWith("?     " + nodes.node(2).uri() + "  version: unknown (NOPERM"),
        r.toString());
    assertTrue(
        check(r, nodes.node(2).uri(), "owner-checked commands").startsWith("info  "),
        "the capability probe does not need INFO: " + r);
  }

  /**
   * What doctor reports of a server's capabilities, read-only, on both binaries (Redis 7 and the
   * 6.2 of embedded-redis): the server and version, that Lua runs, and that neither has an
   * owner-checked command (SET ... IFEQ came with Redis 8.4 and Valkey 8.1, DELEX with Redis 8.4,
   * DELIFEQ with Valkey 9.0). A user who may not run COMMAND gets "unknown (NOPERM ...)", one who
   * may not run EVAL "no (NOPERM ...)": lines of the report, not a failed or aborted run.
   */
  @ParameterizedTest
  @ValueSource(strings = {"redis-7", "redis-6.2"})
  void doctorReportsTheServerScriptingAndOwnerCheckedCommandsOfEachNode(String name) {
    Supplier<RedisBinary> binary =
        name.equals("redis-6.2") ? RedisBinary::embedded : RedisBinary::locate;
    RedisNode node = redis.start(RedisFixture.nodes(1).binary(binary)).node(0);
    String version = node.binary().version();
    assertTrue(!name.equals("redis-6.2") || version.startsWith("6.2."), version);
    String uri = node.uri();

    Result r = redlock("", Map.of(), "doctor", "--nodes", uri);
    assertEquals(0, r.status(), "a report never fails the run: " + r);
    assertEquals("ok    " + uri + "  version: Redis " + version, check(r, uri, "version"));
    assertEquals("info  " + uri + "  scripting: Lua available (EVAL)", check(r, uri, "scripting"));
    assertEquals(
        "info  "
            + uri
            + "  owner-checked commands: SET IFEQ no"
            + (version.startsWith("6.") ? " (no COMMAND DOCS: older than Redis 7.0)" : "")
            + ", DELEX no, DELIFEQ no (report only: the lock uses its scripts)",
        check(r, uri, "owner-checked commands"));
    try (Jedis jedis = on(node)) {
      // The probe reads SET's documented arguments: one SET has is found where COMMAND DOCS is.
      if (!version.startsWith("6.")) {
        assertEquals("yes", ServerChecks.setArgument(jedis, "NX"));
      }
      jedis.aclSetUser("nocommand", "on", ">secret", "~*", "+@all", "-command");
      jedis.aclSetUser("noeval", "on", ">secret", "~*", "+@all", "-eval");
    }

    Result noCommand =
        redlock(
            "",
            Map.of(),
            "doctor",
            "--nodes",
            uri.replace("redis://", "redis://nocommand:secret@"));
    assertEquals(0, noCommand.status(), "an unknown is not a failure: " + noCommand);
    assertLine(
        check(noCommand, uri, "owner-checked commands"), "?     ", noCommand, "unknown (NOPERM");
    assertEquals(
        "info  " + uri + "  scripting: Lua available (EVAL)", check(noCommand, uri, "scripting"));

    Result noEval =
        redlock(
            "", Map.of(), "doctor", "--nodes", uri.replace("redis://", "redis://noeval:secret@"));
    assertLine(check(noEval, uri, "scripting"), "info  ", noEval, "scripting: no (NOPERM");
    assertTrue(
        check(noEval, uri, "owner-checked commands").contains("DELEX no"),
        "the other probes still run: " + noEval);
    assertTrue(
        check(noEval, uri, "permissions").startsWith("FAIL  "),
        "the lock cannot run without EVAL, as before: " + noEval);
    assertFalse(noEval.out().contains("secret"), "no password printed: " + noEval);
  }

  /**
   * A server that has DELEX and DELIFEQ is reported so. No server here has them: this one is a
   * Redis 7 started with two of its commands renamed to those names, which is what COMMAND INFO
   * sees.
   */
  @Test
  void doctorReportsOwnerCheckedCommandsAServerHas() throws Exception {
    RedisBinary server = RedisBinary.locate();
    Path wrapper = dir.resolve("redis-server");
    Files.writeString(
        wrapper,
        "#!/bin/sh\nexec '"
            + server.path()
            + "' \"$@\" --rename-command GETDEL DELEX --rename-command GETEX DELIFEQ\n");
    assertTrue(wrapper.toFile().setExecutable(true));
    RedisBinary renamed = new RedisBinary(wrapper, server.version());
    String uri = redis.start(RedisFixture.nodes(1).binary(() -> renamed)).node(0).uri();

    Result r = redlock("", Map.of(), "doctor", "--nodes", uri);
    assertEquals(
        "info  "
            + uri
            + "  owner-checked commands: SET IFEQ no"
            + (server.version().startsWith("6.") ? " (no COMMAND DOCS: older than Redis 7.0)" : "")
            + ", DELEX yes, DELIFEQ yes (report only: the lock uses its scripts)",
        check(r, uri, "owner-checked commands"),
        r.toString());
  }

  @Test
  void doctorShowsEachNodesLifeAndWhatTheRestartGuardMakesOfItsMarker() throws Exception {
    String prefix = "life:";
    RedisNode node = nodes.node(0);
    String uri = node.uri();
    String runId = runId(node);
    String identity = runId + ":0:" + prefix;
    try (Jedis jedis = on(node)) {
      Result none = doctorWithPrefix(prefix);
      assertEquals(0, none.status(), none.toString());
      assertTrue(
          check(none, uri, "life")
              .startsWith("info  " + uri + "  life: run_id " + runId.substring(0, 8) + ", up "),
          none.toString());
      assertTrue(
          check(none, uri, "restart guard")
              .startsWith("info  " + uri + "  restart guard: no life marker yet"),
          none.toString());
      assertTrue(
          check(none, uri, "restart guard").contains("'redlock init-nodes' lets it vote at once"),
          none.toString());

      // As the guard stamps them: the marker, and a witness in Redis's raw encoding (SETRANGE).
      jedis.setrange(prefix + "@witness", 0, "w");
      String otherLife = "0123456789abcdef0123456789abcdef01234567";
      jedis.set(
          prefix + "@life",
          otherLife + ":0:" + prefix + ":1:" + (nodeMicros(node) - 3_600_000_000L));
      Result restarted = doctorWithPrefix(prefix);
      String line = check(restarted, uri, "restart guard");
      assertTrue(line.startsWith("warn  "), line + "\n" + restarted);
      assertTrue(
          line.contains("the life marker was stamped by another process, database or key prefix"),
          line);
      assertTrue(
          line.contains("the next acquire keeps it out of votes for 60.0s"),
          "not durable now (appendonly no), so the old epoch is not adopted: " + line);

      jedis.set(prefix + "@life", identity + ":0:" + (nodeMicros(node) - 120_000_000L));
      Result old = doctorWithPrefix(prefix);
      line = check(old, uri, "restart guard");
      assertTrue(line.startsWith("ok    "), line + "\n" + old);
      assertTrue(line.contains("never replaced since: votes"), line);

      jedis.set(prefix + "@life", identity + ":0:" + (nodeMicros(node) - 20_000_000L));
      Result young = doctorWithPrefix(prefix);
      line = check(young, uri, "restart guard");
      assertTrue(line.startsWith("warn  "), line + "\n" + young);
      java.util.regex.Matcher left =
          java.util.regex.Pattern.compile("out of votes for ([0-9.]+)s more").matcher(line);
      assertTrue(left.find(), line);
      double seconds = Double.parseDouble(left.group(1));
      assertTrue(seconds > 30 && seconds <= 40, "about 40 s of 60 left: " + line);
      assertEquals(0, young.status(), "a quarantine is a warning: " + young);

      jedis.set(prefix + "@witness", "w"); // a copy of the data: SET, RESTORE or a load
      Result replaced = doctorWithPrefix(prefix);
      line = check(replaced, uri, "restart guard");
      assertTrue(line.startsWith("warn  "), line + "\n" + replaced);
      assertTrue(line.contains("the life marker came back with a copy of the data"), line);
    }
  }

  /**
   * A node with a replica, and clients that trust fsynced AOF restarts: a replica restarted as a
   * master in the node's place would look to the guard like the node restarted from its own AOF,
   * and keep its vote with the replica's data. The doctor fails it (without the opt-in: a warning).
   */
  @Test
  void doctorFailsTheAofRestartOptInOnANodeWithReplicas() throws Exception {
    RedisNode master = nodes.node(0);
    RedisNode replica = nodes.node(2);
    try (Jedis jedis = on(replica)) {
      jedis.replicaof("127.0.0.1", master.port());
    }
    try {
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                try (Jedis jedis = on(master)) {
                  return jedis.info("replication").contains("connected_slaves:1");
                }
              });
      Path config = dir.resolve("redlock-optin.properties");
      Files.writeString(
          config,
          "redlock.nodes=" + nodeList + "\nredlock.restartGuard=trust_fsynced_aof_restarts\n");
      Result optIn = redlock("", Map.of(), "doctor", "--config", config.toString());
      String line = check(optIn, master.uri(), "independence");
      assertTrue(line.startsWith("FAIL  "), line + "\n" + optIn);
      assertSays(line, "a replica restarted as a master in its place keeps its vote");
      Result plain = doctorWithPrefix("replicas:");
      assertTrue(check(plain, master.uri(), "independence").startsWith("warn  "), plain.toString());
    } finally {
      try (Jedis jedis = on(replica)) {
        jedis.replicaofNoOne();
      }
    }
  }

  @Test
  void doctorReportsThePreviousVersionsKeysAsInformation() throws Exception {
    String prefix = "legacy:";
    RedisNode node = nodes.node(2);
    try (Jedis jedis = on(node)) {
      jedis.set(prefix + "@epoch", "0");
      jedis.hset(prefix + "@fences", prefix + "r", "17");
      Result r = doctorWithPrefix(prefix);
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
    }
  }

  @Test
  void doctorFailsAnUnreachableNode() {
    Result r = redlock("", Map.of(), "doctor", "--nodes", nodeList + ",redis://127.0.0.1:1");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    assertTrue(r.out().contains("FAIL  redis://127.0.0.1:1  reachable: "), r.toString());
  }
}
