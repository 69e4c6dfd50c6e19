package dev.redlock.cli;

import dev.redlock.admin.RedlockAdmin;
import dev.redlock.cli.ServerChecks.Verdict;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
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
          + " with the fix: reachability and round trip; the server and its version (redis_version,"
          + " and server_name, valkey_version where present); that the node lets the"
          + " client see its restarts (INFO: run_id, uptime); persistence (appendonly,"
          + " appendfsync, save) and what it means for the restart guard; maxmemory-policy"
          + " (eviction of lock and fence keys); the guard's view of the node now (its life"
          + " marker: voting, or quarantined and for how long); keys the previous version left;"
          + " clock skew (TIME) between nodes and against this machine; that the nodes are"
          + " independent masters (distinct run_id, no replica); ACL permissions for the commands"
          + " the lock runs; node count and quorum. Reported only: whether Lua scripting runs"
          + " (EVAL of 'return 1') and whether the server has owner-checked commands (SET ..."
          + " IFEQ, DELEX, DELIFEQ) that could replace the scripts; the lock uses its scripts"
          + " either way.",
      "A node that refuses INFO fails (its vote would never count); one that refuses CONFIG GET"
          + " gets a warning for persistence (treated as not durable) and '?' for eviction."
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

  /** What one node told us, for the checks across nodes. */
  private record Seen(String node, String runId, long clockOffsetMillis) {}

  private final ServerChecks report = new ServerChecks();
  private final List<ServerChecks.Check> checks = report.checks;

  @Override
  public Integer call() {
    RedlockConfig config = nodes.config(spec, cli.env);
    checkTopology(config);
    List<Seen> seen = new ArrayList<>();
    try (RedlockAdmin admin = RedlockAdmin.create(config)) {
      for (int i = 0; i < admin.nodes().size(); i++) {
        String node = admin.nodes().get(i);
        try (Jedis jedis = admin.connect(i)) {
          Seen s = checkNode(admin, i, config, node, jedis);
          if (s != null) {
            seen.add(s);
          }
        } catch (RuntimeException e) {
          add(
              Verdict.FAIL,
              node,
              "reachable",
              e.getMessage(),
              String.valueOf(e.getMessage()).contains("javax.net.ssl")
                  ? "trust the node's certificate (REDLOCK_JAVA_OPTS=\"-Djavax.net.ssl.trustStore=FILE"
                      + " -Djavax.net.ssl.trustStorePassword=...\") and check it names the host of"
                      + " the URI (an IP needs an IP subject alternative name)"
                  : "start the node, or fix its address/credentials");
        }
      }
    }
    checkAcrossNodes(config, seen);
    for (ServerChecks.Check c : checks) {
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
    report.add(v, node, what, detail, fix);
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

  private Seen checkNode(
      RedlockAdmin admin, int index, RedlockConfig config, String node, Jedis jedis) {
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
    Map<String, String> server = null;
    Map<String, String> persistence = Map.of();
    try {
      server = NodeLife.info(jedis, "server");
      report.checkVersion(node, server);
      report.checkRole(config, node, NodeLife.info(jedis, "replication"));
      persistence = NodeLife.info(jedis, "persistence");
    } catch (JedisDataException e) {
      if (server == null) {
        add(Verdict.UNKNOWN, node, "version", "unknown (" + e.getMessage() + ")", null);
      }
      add(
          Verdict.FAIL,
          node,
          "restarts",
          "INFO refused ("
              + e.getMessage()
              + "): the client cannot tell whether the node restarted, so it never sends it an"
              + " acquire and never counts its vote",
          "grant the user +info (and +config|get, so a node with appendfsync always keeps its"
              + " vote across restarts)");
    }
    report.checkCapabilities(node, jedis);
    boolean durable = report.checkPersistence(config, node, jedis, persistence);
    report.checkEviction(node, jedis);
    long before = System.currentTimeMillis();
    long nowMicros = NodeLife.nodeMicros(jedis);
    long after = System.currentTimeMillis();
    if (server != null) {
      checkLife(admin, index, config, node, server);
    }
    checkLegacyKeys(config, node, jedis);
    checkPermissions(config, node, jedis);
    long offset = nowMicros / 1000 - (before + after) / 2;
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
    return new Seen(node, server == null ? null : server.get("run_id"), offset);
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

  /** The node's life (run_id, uptime) and what the restart guard makes of it now. */
  private void checkLife(
      RedlockAdmin admin,
      int index,
      RedlockConfig config,
      String node,
      Map<String, String> server) {
    long uptime = Long.parseLong(server.getOrDefault("uptime_in_seconds", "0"));
    add(
        Verdict.INFO,
        node,
        "life",
        "run_id " + NodeLife.shortId(server.get("run_id")) + ", up " + NodeLife.uptime(uptime),
        null);
    if (config.restartGuard() == RestartGuard.OFF) {
      add(
          Verdict.FAIL,
          node,
          "restart guard",
          "off in this configuration: a node restarted or restored without its writes can grant a"
              + " lock twice",
          "keep the restart guard on");
      return;
    }
    RedlockAdmin.GuardView view;
    try {
      view = admin.restartGuard(index);
    } catch (RuntimeException e) {
      add(
          Verdict.UNKNOWN,
          node,
          "restart guard",
          "cannot ask the node (" + e.getMessage() + ")",
          "grant the user what the lock's scripts need (the permissions check says what)");
      return;
    }
    if (view.unknown() == null) { // else INFO is refused, and the "restarts" check says so
      boolean untilNextAcquire = !view.why().equals("trusted");
      add(
          view.why().equals("no marker")
              ? Verdict.INFO
              : view.quarantine().isZero() ? Verdict.OK : Verdict.WARN,
          node,
          "restart guard",
          describe(view, config)
              + (untilNextAcquire && view.why().equals("no marker")
                  ? "; if the node is new and never served a lock, 'redlock init-nodes' lets it"
                      + " vote at once"
                  : ""),
          null);
    }
  }

  /** What the guard found on a node, and what its next acquire does, in one line for people. */
  static String describe(RedlockAdmin.GuardView view, RedlockConfig config) {
    String found =
        switch (view.why()) {
          case "trusted" -> "data stamped by this process life, never replaced since";
          case "no marker" -> "no life marker yet (a new node, or its data is gone)";
          case "foreign marker" ->
              "the life marker was stamped by another process, database or key prefix (a"
                  + " restart, a SWAPDB, a restore)";
          case "data replaced" ->
              "the life marker came back with a copy of the data (a resync from a master, DEBUG"
                  + " RELOAD, a RESTORE)";
          case "restarted durable" ->
              "restarted from an AOF fsynced on every write: the next acquire keeps its marker's"
                  + " epoch";
          default -> view.why();
        };
    if (view.quarantine().isZero()) {
      return found + ": votes";
    }
    String left = Durations.format(view.quarantine());
    return found
        + (view.why().equals("trusted")
            ? ": quarantined, out of votes for " + left + " more"
            : ": the next acquire keeps it out of votes for " + left);
  }

  /** Keys the previous version wrote: harmless, and deletable once no client uses them. */
  private void checkLegacyKeys(RedlockConfig config, String node, Jedis jedis) {
    String epoch = NodeLife.legacyEpochKey(config.keyPrefix());
    String fences = NodeLife.legacyFencesKey(config.keyPrefix());
    List<String> present = new ArrayList<>();
    try {
      if (jedis.exists(epoch)) {
        present.add(epoch);
      }
      if (jedis.exists(fences)) {
        present.add(fences);
      }
    } catch (JedisDataException e) {
      return; // the permissions check says what the user may not do
    }
    if (!present.isEmpty()) {
      add(
          Verdict.INFO,
          node,
          "legacy keys",
          String.join(", ", present)
              + " from the previous version: no longer used once every client runs this version;"
              + " safe to delete then",
          "once every client is upgraded: DEL " + String.join(" ", present));
    }
  }

  /** Runs, under this user, every command the lock's scripts run, on keys of its own. */
  private void checkPermissions(RedlockConfig config, String node, Jedis jedis) {
    // Under the read-write locks' names, for a name that cannot exist ('@doctor'): no lock key of
    // any prefix can be this key (a resource cannot contain '@rw:'), nor any real lock's key.
    String key = config.keyPrefix() + "@rw:@doctor";
    String script =
        "if redis.replicate_commands then redis.replicate_commands() end "
            + "redis.call('TIME') "
            + "redis.call('SET', KEYS[1], 'x', 'NX', 'PX', 5000) "
            + "redis.call('GET', KEYS[1]) redis.call('PEXPIRE', KEYS[1], 5000) "
            + "redis.call('PTTL', KEYS[1]) redis.call('EXISTS', KEYS[2]) "
            + "redis.call('SET', KEYS[2], '1', 'PX', 5000) redis.call('GET', KEYS[2]) "
            + "redis.call('OBJECT', 'ENCODING', KEYS[2]) redis.call('SETRANGE', KEYS[2], 0, 'w') "
            + "redis.call('DEL', KEYS[1], KEYS[2]) return 1";
    try {
      jedis.eval(script, 2, key, key + "-fence"); // EVAL loads it; the lock then uses EVALSHA
      jedis.evalsha(sha1(script), 2, key, key + "-fence");
      add(Verdict.OK, node, "permissions", "EVAL/EVALSHA and the scripts' commands allowed", null);
    } catch (JedisDataException e) {
      add(
          Verdict.FAIL,
          node,
          "permissions",
          e.getMessage(),
          "grant the user: +eval +evalsha +time +set +get +pexpire +pttl +exists +del"
              + " +info +config|get on ~"
              + config.keyPrefix()
              + "*");
      return;
    }
    // Read-write locks keep their readers in a sorted set: a user without its commands takes
    // plain locks, semaphores and sets, but every read-write acquisition fails as an error.
    String readers =
        "redis.call('ZADD', KEYS[1], 1, 'x') redis.call('ZSCORE', KEYS[1], 'x') "
            + "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', 0) redis.call('ZREM', KEYS[1], 'x') "
            + "redis.call('DEL', KEYS[1]) return 1";
    try {
      jedis.eval(readers, 1, key + "-readers");
      add(Verdict.OK, node, "permissions (read-write locks)", "sorted-set commands allowed", null);
    } catch (JedisDataException e) {
      add(
          Verdict.WARN,
          node,
          "permissions (read-write locks)",
          e.getMessage() + "; every read-write lock acquisition would fail on this node",
          "if you use read-write locks, grant the user +zadd +zscore +zrem +zremrangebyscore");
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
