package dev.redlock.cli;

import dev.redlock.RedlockAdmin;
import dev.redlock.RedlockConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

@Command(
    name = "doctor",
    mixinStandardHelpOptions = true,
    description = {
      "Checks every node against what Redlock's safety needs, and prints a verdict per check"
          + " with the fix: reachability and round trip; Redis version; persistence (appendonly,"
          + " appendfsync) against the restart guard; maxmemory-policy (eviction of lock keys);"
          + " clock skew (TIME) between nodes and against this machine; that the nodes are"
          + " independent masters (distinct run_id, no replica); ACL permissions for the commands"
          + " the lock runs; node count and quorum.",
      "A node that refuses CONFIG GET gets '?' (unknown) for those checks, not a failure."
    },
    footer = {
      "",
      "Exit statuses: 0 no check failed (warnings allowed), 1 a check failed, 2 bad flags.",
      "",
      "Examples:",
      "  redlock doctor --nodes redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379",
      "  redlock doctor --config /etc/settlement/redlock.properties"
    })
final class DoctorCommand extends CliCommand {
  @Spec CommandLine.Model.CommandSpec spec;
  @Mixin NodeOptions nodes;

  enum Verdict {
    OK("ok  "),
    WARN("warn"),
    FAIL("FAIL"),
    UNKNOWN("?   ");

    final String label;

    Verdict(String label) {
      this.label = label;
    }
  }

  record Check(Verdict verdict, String node, String what, String detail, String fix) {}

  /** What one node told us, for the checks across nodes. */
  private record Seen(String node, String runId, long clockOffsetMillis) {}

  private final List<Check> checks = new ArrayList<>();

  @Override
  public Integer call() {
    RedlockConfig config = nodes.config(spec, cli.env);
    checkTopology(config);
    List<Seen> seen = new ArrayList<>();
    try (RedlockAdmin admin = RedlockAdmin.create(config)) {
      for (int i = 0; i < admin.nodes().size(); i++) {
        String node = admin.nodes().get(i);
        try (Jedis jedis = admin.connect(i)) {
          Seen s = checkNode(config, node, jedis);
          if (s != null) {
            seen.add(s);
          }
        } catch (RuntimeException e) {
          add(
              Verdict.FAIL,
              node,
              "reachable",
              e.getMessage(),
              "start the node, or fix its address/credentials");
        }
      }
    }
    checkAcrossNodes(config, seen);
    for (Check c : checks) {
      cli.out.println(
          c.verdict().label
              + "  "
              + (c.node() == null ? "all nodes" : c.node())
              + "  "
              + c.what()
              + ": "
              + c.detail()
              + (c.fix() == null ? "" : "\n        fix: " + c.fix()));
    }
    long failed = checks.stream().filter(c -> c.verdict() == Verdict.FAIL).count();
    long warned = checks.stream().filter(c -> c.verdict() == Verdict.WARN).count();
    cli.out.println(
        failed == 0
            ? "doctor: no check failed (" + warned + " warning(s))"
            : "doctor: " + failed + " check(s) failed, " + warned + " warning(s)");
    return failed == 0 ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
  }

  private void add(Verdict v, String node, String what, String detail, String fix) {
    checks.add(new Check(v, node, what, detail, fix));
  }

  private void checkTopology(RedlockConfig config) {
    int n = config.nodes().size();
    if (n < 3) {
      add(
          Verdict.WARN,
          null,
          "node count",
          n + " node(s), quorum " + config.quorum() + ": no node may fail",
          "use 3 or 5 independent nodes, on separate machines");
    } else if (n % 2 == 0) {
      add(
          Verdict.WARN,
          null,
          "node count",
          n
              + " nodes, quorum "
              + config.quorum()
              + ": tolerate "
              + (n - config.quorum())
              + " down, no more than "
              + (n - 1)
              + " would",
          "use an odd number of nodes");
    } else {
      add(
          Verdict.OK,
          null,
          "node count",
          n
              + " nodes, quorum "
              + config.quorum()
              + ", tolerates "
              + (n - config.quorum())
              + " down",
          null);
    }
  }

  private Seen checkNode(RedlockConfig config, String node, Jedis jedis) {
    long rtt = roundTripMicros(jedis);
    add(
        Verdict.OK,
        node,
        "reachable",
        String.format(Locale.ROOT, "round trip %.2f ms", rtt / 1000.0),
        null);
    if (rtt > config.nodeTimeout().toNanos() / 1000 / 2) {
      add(
          Verdict.WARN,
          node,
          "round trip",
          "over half of nodeTimeout (" + config.nodeTimeout().toMillis() + " ms)",
          "raise redlock.nodeTimeout, or move the node closer");
    }
    Map<String, String> server = info(jedis, "server");
    Map<String, String> replication = info(jedis, "replication");
    checkVersion(node, server.getOrDefault("redis_version", "unknown"));
    checkRole(node, replication);
    checkPersistence(config, node, jedis);
    checkEviction(node, jedis);
    checkPermissions(config, node, jedis);
    long before = System.currentTimeMillis();
    List<String> time = jedis.time();
    long after = System.currentTimeMillis();
    long nodeMillis = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
    long offset = nodeMillis - (before + after) / 2;
    if (Math.abs(offset) > 1000) {
      add(
          Verdict.WARN,
          node,
          "clock",
          "differs from this machine's by " + offset + " ms",
          "run NTP (chrony) on the node and here; slew, never step");
    } else {
      add(Verdict.OK, node, "clock", "within " + Math.abs(offset) + " ms of this machine", null);
    }
    return new Seen(node, server.get("run_id"), offset);
  }

  private static long roundTripMicros(Jedis jedis) {
    long best = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      long t = System.nanoTime();
      jedis.ping();
      best = Math.min(best, (System.nanoTime() - t) / 1000);
    }
    return best;
  }

  private static Map<String, String> info(Jedis jedis, String section) {
    Map<String, String> values = new HashMap<>();
    for (String line : jedis.info(section).split("\r?\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith("#")) {
        values.put(line.substring(0, colon), line.substring(colon + 1).trim());
      }
    }
    return values;
  }

  private void checkVersion(String node, String version) {
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
      add(Verdict.OK, node, "version", "Redis " + version, null);
    } else {
      add(
          Verdict.FAIL,
          node,
          "version",
          "Redis " + version + " is older than 6.2, the oldest tested",
          "upgrade to Redis 6.2 or 7");
    }
  }

  private void checkRole(String node, Map<String, String> replication) {
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
      add(
          Verdict.WARN,
          node,
          "independence",
          "has "
              + replication.get("connected_slaves")
              + " replica(s): a failover to one can lose locks",
          "do not fail lock nodes over to replicas");
    } else {
      add(Verdict.OK, node, "independence", "a master without replicas", null);
    }
  }

  /** A node that will not say (ACL, managed Redis): unknown, not a failure. */
  private void configRefused(String node, String what, JedisDataException e, String fix) {
    add(Verdict.UNKNOWN, node, what, "CONFIG GET refused (" + e.getMessage() + ")", fix);
  }

  private String configGet(Jedis jedis, String name) {
    Map<String, String> value = jedis.configGet(name);
    return value.get(name);
  }

  private void checkPersistence(RedlockConfig config, String node, Jedis jedis) {
    String appendonly;
    String appendfsync;
    try {
      appendonly = configGet(jedis, "appendonly");
      appendfsync = configGet(jedis, "appendfsync");
    } catch (JedisDataException e) {
      configRefused(node, "persistence", e, "check appendonly and appendfsync by hand");
      return;
    }
    if (!"yes".equals(appendonly)) {
      if (config.restartGuard()) {
        add(
            Verdict.WARN,
            node,
            "persistence",
            "appendonly "
                + appendonly
                + ": a restart forgets its locks; the restart guard keeps it"
                + " out of votes for maxTtl ("
                + config.maxTtl().toSeconds()
                + " s) after each",
            "appendonly yes, appendfsync always");
      } else {
        add(
            Verdict.FAIL,
            node,
            "persistence",
            "appendonly "
                + appendonly
                + " and the restart guard is off: a restart can grant a lock twice",
            "appendonly yes, appendfsync always (and keep the guard on)");
      }
    } else if (!"always".equals(appendfsync)) {
      add(
          Verdict.WARN,
          node,
          "persistence",
          "appendfsync "
              + appendfsync
              + ": a machine crash can lose the last second of locks while"
              + " the node's epoch survives, so the guard cannot tell",
          "appendfsync always");
    } else {
      add(Verdict.OK, node, "persistence", "appendonly yes, appendfsync always", null);
    }
  }

  private void checkEviction(String node, Jedis jedis) {
    String policy;
    try {
      policy = configGet(jedis, "maxmemory-policy");
    } catch (JedisDataException e) {
      configRefused(node, "eviction", e, "check maxmemory-policy by hand: noeviction");
      return;
    }
    if ("noeviction".equals(policy)) {
      add(Verdict.OK, node, "eviction", "maxmemory-policy noeviction", null);
    } else {
      add(
          Verdict.FAIL,
          node,
          "eviction",
          "maxmemory-policy "
              + policy
              + " can evict lock keys (they carry a ttl) while they are held",
          "CONFIG SET maxmemory-policy noeviction (and in redis.conf)");
    }
  }

  /** Runs, under this user, every command the lock's scripts run, on keys of its own. */
  private void checkPermissions(RedlockConfig config, String node, Jedis jedis) {
    String key = config.keyPrefix() + "@doctor";
    String script =
        "if redis.replicate_commands then redis.replicate_commands() end "
            + "redis.call('TIME') "
            + "redis.call('SET', KEYS[1], 'x', 'NX', 'PX', 5000) "
            + "redis.call('GET', KEYS[1]) redis.call('PEXPIRE', KEYS[1], 5000) "
            + "redis.call('PTTL', KEYS[1]) "
            + "redis.call('HSET', KEYS[2], 'f', '1') redis.call('HINCRBY', KEYS[2], 'f', 1) "
            + "redis.call('HGET', KEYS[2], 'f') redis.call('HEXISTS', KEYS[2], 'f') "
            + "redis.call('DEL', KEYS[1], KEYS[2]) return 1";
    try {
      jedis.eval(script, 2, key, key + "-fences"); // EVAL loads it; the lock then uses EVALSHA
      jedis.evalsha(sha1(script), 2, key, key + "-fences");
      add(Verdict.OK, node, "permissions", "EVAL/EVALSHA and the scripts' commands allowed", null);
    } catch (JedisDataException e) {
      add(
          Verdict.FAIL,
          node,
          "permissions",
          e.getMessage(),
          "grant the user: +eval +evalsha +time +set +get +pexpire +pttl +hset"
              + " +hincrby +hget +hexists +del on ~"
              + config.keyPrefix()
              + "*");
    }
  }

  private static String sha1(String text) {
    try {
      return java.util.HexFormat.of()
          .formatHex(
              java.security.MessageDigest.getInstance("SHA-1")
                  .digest(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is a required JDK algorithm", e);
    }
  }

  private void checkAcrossNodes(RedlockConfig config, List<Seen> seen) {
    Map<String, String> byRunId = new HashMap<>();
    boolean distinct = true;
    for (Seen s : seen) {
      if (s.runId() == null) {
        continue;
      }
      String other = byRunId.putIfAbsent(s.runId(), s.node());
      if (other != null) {
        distinct = false;
        add(
            Verdict.FAIL,
            s.node(),
            "independence",
            "is the same server as " + other + " (run_id " + s.runId() + ")",
            "list each node once: one server is one vote");
      }
    }
    if (distinct && seen.size() > 1) {
      add(Verdict.OK, null, "independence", seen.size() + " distinct servers (run_id)", null);
    }
    if (seen.size() > 1) {
      long min = seen.stream().mapToLong(Seen::clockOffsetMillis).min().orElse(0);
      long max = seen.stream().mapToLong(Seen::clockOffsetMillis).max().orElse(0);
      long spread = max - min;
      Duration limit = config.maxTtl().dividedBy(2);
      if (spread > limit.toMillis()) {
        add(
            Verdict.FAIL,
            null,
            "clock skew",
            "node clocks differ by "
                + spread
                + " ms, over maxTtl/2: fencing counters started on"
                + " different nodes may not be ordered",
            "synchronise the nodes' clocks (NTP)");
      } else if (spread > 1000) {
        add(
            Verdict.WARN,
            null,
            "clock skew",
            "node clocks differ by " + spread + " ms",
            "synchronise the nodes' clocks (NTP)");
      } else {
        add(
            Verdict.OK,
            null,
            "clock skew",
            "node clocks within " + spread + " ms of each other",
            null);
      }
    }
  }
}
