package dev.redlock.cli;

import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * {@code doctor}'s report, and its checks of one server's own settings: its version and role,
 * scripting and owner-checked commands, persistence and eviction. The checks that need the lock's
 * view (the guard, keys, permissions, clocks across nodes) are {@link DoctorCommand}'s.
 */
final class ServerChecks {
  enum Verdict {
    OK("ok  "),
    WARN("warn"),
    FAIL("FAIL"),
    INFO("info"),
    UNKNOWN("?   ");

    final String label;

    Verdict(String label) {
      this.label = label;
    }
  }

  record Check(Verdict verdict, String node, String what, String detail, String fix) {}

  final List<Check> checks = new ArrayList<>();

  void add(Verdict v, String node, String what, String detail, String fix) {
    checks.add(new Check(v, node, what, detail, fix));
  }

  /**
   * The server and its version, from INFO server: {@code Redis 7.0.15}, or for a server that names
   * itself (Valkey, whose redis_version stays 7.2.4) {@code valkey 8.1.1 (redis_version 7.2.4)}.
   */
  static String server(Map<String, String> info) {
    String redis = info.getOrDefault("redis_version", "unknown");
    String name = info.get("server_name");
    String own = info.get("valkey_version");
    if (name == null && own == null) {
      return "Redis " + redis;
    }
    return (name == null ? "valkey" : name)
        + (own == null ? "" : " " + own)
        + " (redis_version "
        + redis
        + ")";
  }

  void checkVersion(String node, Map<String, String> info) {
    String version = info.getOrDefault("redis_version", "unknown");
    String[] parts = version.split("\\.");
    int major;
    int minor;
    try {
      major = Integer.parseInt(parts[0]);
      minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
    } catch (NumberFormatException e) {
      add(Verdict.UNKNOWN, node, "version", "cannot read '" + version + "'", null);
      return;
    }
    if (major > 6 || (major == 6 && minor >= 2)) {
      add(Verdict.OK, node, "version", server(info), null);
    } else {
      add(
          Verdict.FAIL,
          node,
          "version",
          server(info) + " is older than 6.2, the oldest tested",
          "upgrade to Redis 6.2 or 7");
    }
  }

  void checkRole(RedlockConfig config, String node, Map<String, String> replication) {
    String role = replication.getOrDefault("role", "unknown");
    if ("slave".equals(role) || "replica".equals(role)) {
      add(
          Verdict.FAIL,
          node,
          "independence",
          "is a replica of "
              + replication.get("master_host")
              + ":"
              + replication.get("master_port"),
          "point Redlock at independent masters; a replica is not another vote");
    } else if (!"0".equals(replication.getOrDefault("connected_slaves", "0"))) {
      // A replica restarted as a master in its place looks to the guard like this node restarted
      // from its own AOF: with the opt-in, it would keep the node's vote with the replica's data.
      boolean optIn = config.restartGuard() == RestartGuard.TRUST_FSYNCED_AOF_RESTARTS;
      add(
          optIn ? Verdict.FAIL : Verdict.WARN,
          node,
          "independence",
          "has "
              + replication.get("connected_slaves")
              + " replica(s): a failover to one can lose locks"
              + (optIn
                  ? ", and with restartGuard=trust_fsynced_aof_restarts a replica restarted as a master in its"
                      + " place keeps its vote"
                  : ""),
          optIn
              ? "detach the replicas, or set restartGuard back to on"
              : "do not fail lock nodes over to replicas");
    } else {
      add(Verdict.OK, node, "independence", "a master without replicas", null);
    }
  }

  /**
   * Reports, without writing anything, whether Lua scripting runs and which owner-checked commands
   * the server has (Redis 8.4: SET ... IFEQ and DELEX; Valkey: SET ... IFEQ from 8.1, DELIFEQ from
   * 9.0, DELEX from 9.2). Information only: the lock runs its scripts whatever this says.
   */
  void checkCapabilities(String node, Jedis jedis) {
    try {
      jedis.eval("return 1", 0);
      add(Verdict.INFO, node, "scripting", "Lua available (EVAL)", null);
    } catch (JedisDataException e) {
      add(Verdict.INFO, node, "scripting", "no (" + e.getMessage() + ")", null);
    }
    String what = "owner-checked commands";
    String found;
    try {
      // One entry per name, nil for a command the server does not have.
      List<?> commands =
          (List<?>) jedis.sendCommand(Protocol.Command.COMMAND, "INFO", "DELEX", "DELIFEQ");
      found =
          "SET IFEQ "
              + setArgument(jedis, "IFEQ")
              + ", DELEX "
              + (commands.get(0) == null ? "no" : "yes")
              + ", DELIFEQ "
              + (commands.get(1) == null ? "no" : "yes");
    } catch (JedisDataException e) {
      add(Verdict.UNKNOWN, node, what, "unknown (" + e.getMessage() + ")", null);
      return;
    }
    add(Verdict.INFO, node, what, found + " (report only: the lock uses its scripts)", null);
  }

  /**
   * Whether SET takes the argument {@code token} ({@code yes} or {@code no}), as COMMAND DOCS
   * (Redis 7.0+) documents it: IFEQ is an argument of SET, not a command of its own. A server
   * without COMMAND DOCS predates every SET ... IFEQ (Redis 8.4, Valkey 8.1): {@code no}.
   *
   * @throws JedisDataException if the user may not run COMMAND
   */
  static String setArgument(Jedis jedis, String token) {
    Object docs;
    try {
      docs = jedis.sendCommand(Protocol.Command.COMMAND, "DOCS", "SET");
    } catch (JedisDataException e) {
      if (String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT).contains("unknown subcommand")) {
        return "no (no COMMAND DOCS: older than Redis 7.0)";
      }
      throw e;
    }
    return mentions(docs, token) ? "yes" : "no";
  }

  /** Whether {@code reply}, nested arrays and maps included, holds the string {@code word}. */
  private static boolean mentions(Object reply, String word) {
    if (reply instanceof byte[] bytes) {
      return word.equalsIgnoreCase(new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
    }
    if (reply instanceof List<?> list) {
      return list.stream().anyMatch(item -> mentions(item, word));
    }
    if (reply instanceof Map<?, ?> map) {
      return map.entrySet().stream()
          .anyMatch(e -> mentions(e.getKey(), word) || mentions(e.getValue(), word));
    }
    return word.equalsIgnoreCase(String.valueOf(reply));
  }

  private static String configGet(Jedis jedis, String name) {
    // One name per CONFIG GET: Redis 6.2 takes only one.
    return jedis.configGet(name).get(name);
  }

  private static String configGetOrNull(Jedis jedis, String name) {
    try {
      return configGet(jedis, name);
    } catch (JedisDataException e) {
      return null;
    }
  }

  /**
   * Reports what the node's persistence means for the restart guard (the guard sees every restart
   * by run_id; only appendonly yes + appendfsync always lets it keep the node's vote across one).
   *
   * @return whether a client counts the node as durable: aof_enabled and appendfsync always
   */
  boolean checkPersistence(
      RedlockConfig config, String node, Jedis jedis, Map<String, String> persistenceInfo) {
    String maxTtl = "maxTtl (" + Durations.format(config.maxTtl()) + ")";
    String appendonly;
    String appendfsync;
    String save;
    try {
      appendonly = configGet(jedis, "appendonly");
      appendfsync = configGet(jedis, "appendfsync");
      save = configGet(jedis, "save");
    } catch (JedisDataException e) {
      add(
          config.restartGuard() != RestartGuard.OFF ? Verdict.WARN : Verdict.FAIL,
          node,
          "persistence",
          "CONFIG GET refused ("
              + e.getMessage()
              + "): durability unknown, so the client treats the node as not durable: every"
              + " restart keeps it out of votes for "
              + maxTtl
              + ", even with appendfsync always",
          "grant the user +config|get (and check appendonly, appendfsync by hand)");
      return false;
    }
    boolean aof = "yes".equals(appendonly);
    boolean always = "always".equals(appendfsync);
    // The client reads aof_enabled from INFO; CONFIG says the same unless INFO was refused.
    boolean durable =
        aof && always && !"0".equals(persistenceInfo.getOrDefault("aof_enabled", "1"));
    String setting;
    String consequence;
    String detected = "the restart guard sees each restart by run_id";
    String fix = "appendonly yes and appendfsync always (CONFIG SET, and in redis.conf)";
    String noFsyncOnRewrite = durable ? configGetOrNull(jedis, "no-appendfsync-on-rewrite") : null;
    if (durable && "yes".equals(noFsyncOnRewrite)) {
      add(
          Verdict.WARN,
          node,
          "persistence",
          "appendonly yes, appendfsync always, but no-appendfsync-on-rewrite yes: no fsync while a"
              + " save or rewrite runs, so a crash can lose acknowledged writes; clients treat the"
              + " node as not durable, and each restart keeps it out of votes for "
              + maxTtl,
          "no-appendfsync-on-rewrite no (CONFIG SET, and in redis.conf)");
      return true;
    }
    if (durable) {
      add(
          Verdict.OK,
          node,
          "persistence",
          "appendonly yes, appendfsync always: a restart keeps every acknowledged write"
              + (config.restartGuard() == RestartGuard.TRUST_FSYNCED_AOF_RESTARTS
                  ? ", and with restartGuard=trust_fsynced_aof_restarts the node keeps its vote"
                  : "; without restartGuard=trust_fsynced_aof_restarts (not the default) each restart still keeps"
                      + " the node out of votes for "
                      + maxTtl),
          null);
      return true;
    } else if (aof) {
      setting = "appendonly yes, appendfsync " + appendfsync;
      consequence =
          "a restart may lose the last writes ("
              + ("everysec".equals(appendfsync)
                  ? "up to ~1 s"
                  : "whatever the OS had not yet written")
              + ")";
      fix = "appendfsync always (CONFIG SET appendfsync always, and in redis.conf)";
    } else if (save != null && !save.isBlank()) {
      setting = "RDB snapshots only (save '" + save + "', appendonly no)";
      consequence = "a restart reloads an older snapshot, without the locks taken since";
    } else {
      setting = "no persistence (appendonly no, save '')";
      consequence = "a restart comes back empty";
      detected = "the restart guard finds no life marker after a restart";
    }
    if (config.restartGuard() != RestartGuard.OFF) {
      add(
          Verdict.WARN,
          node,
          "persistence",
          setting
              + ": "
              + consequence
              + "; "
              + detected
              + " and keeps the node out of votes for "
              + maxTtl
              + " after it: safe, but the node's vote is lost that long",
          fix
              + ": then, with restartGuard=trust_fsynced_aof_restarts, a restart keeps the node's vote");
    } else {
      add(
          Verdict.FAIL,
          node,
          "persistence",
          setting
              + ": "
              + consequence
              + ", and the restart guard is off: a restart can grant a"
              + " lock twice",
          fix + ", and keep the restart guard on");
    }
    return false;
  }

  void checkEviction(String node, Jedis jedis) {
    String policy;
    try {
      policy = configGet(jedis, "maxmemory-policy");
    } catch (JedisDataException e) {
      add(
          Verdict.UNKNOWN,
          node,
          "eviction",
          "CONFIG GET refused (" + e.getMessage() + ")",
          "grant the user +config|get, or check by hand that maxmemory-policy is noeviction");
      return;
    }
    if ("noeviction".equals(policy)) {
      add(Verdict.OK, node, "eviction", "maxmemory-policy noeviction", null);
      return;
    }
    String what;
    if (policy != null && policy.startsWith("volatile-")) {
      what =
          "evicts keys that carry a ttl when memory runs out, and lock keys and fence keys all"
              + " carry one";
    } else if (policy != null && policy.startsWith("allkeys-")) {
      what = "may evict any key when memory runs out: lock keys, fence keys, the life marker";
    } else {
      what = "may evict keys when memory runs out";
    }
    add(
        Verdict.FAIL,
        node,
        "eviction",
        "maxmemory-policy "
            + policy
            + " "
            + what
            + ": an evicted lock key is a lock granted twice, an evicted fence key lets fencing"
            + " tokens go back",
        "CONFIG SET maxmemory-policy noeviction (and in redis.conf); size maxmemory so that it is"
            + " never reached");
  }
}
