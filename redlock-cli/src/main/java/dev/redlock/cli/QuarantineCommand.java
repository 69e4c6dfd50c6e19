package dev.redlock.cli;

import dev.redlock.RedlockAdmin;
import dev.redlock.RedlockConfig;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.exceptions.JedisDataException;

@Command(
    name = "quarantine",
    mixinStandardHelpOptions = true,
    description = {
      "Keeps one node out of every client's votes for maxTtl from now, by stamping its life marker"
          + " ({prefix}@life) with the node's own run_id and its clock: for data restored onto a"
          + " running node in a way the restart guard cannot see, such as DEBUG RELOAD NOSAVE of an"
          + " older dump, or FLUSHALL and RESTORE of keys dumped earlier from the same process.",
      "A restart needs no quarantine command: the guard sees it by run_id. Asks you to type the"
          + " node's host:port, unless --yes. Logged on the dev.redlock.audit logger with who and"
          + " when."
    },
    footer = {
      "",
      "Exit statuses: 0 stamped, 1 not confirmed, 2 bad flags or a node not in the list,"
          + " 125 the node could not be reached or read.",
      "",
      "Examples:",
      "  redlock quarantine --node redis://10.0.0.2:6379",
      "  redlock quarantine --node 2 --yes --reason 'restored dump of 02:00 onto it, INC-4412'"
    })
final class QuarantineCommand extends CliCommand {
  private static final Logger audit = LoggerFactory.getLogger("dev.redlock.audit");

  /**
   * Stamps {@code <run_id>:0:<TIME in µs>} in one step on the node, so the epoch is the node's
   * clock at the write. {@code d} = 0: a later restart does not adopt this epoch either.
   */
  private static final String STAMP =
      "if redis.replicate_commands then redis.replicate_commands() end "
          + "local t = redis.call('TIME') "
          + "local v = ARGV[1] .. ':0:' .. t[1] .. string.format('%06d', tonumber(t[2])) "
          + "redis.call('SET', KEYS[1], v) return v";

  @Spec CommandLine.Model.CommandSpec spec;
  @Mixin NodeOptions nodes;

  @Option(
      names = "--node",
      required = true,
      paramLabel = "NODE",
      description =
          "The node to quarantine: its URI as in the node list (redis://host:port), or its"
              + " position in the list, counting from 1.")
  String node;

  @Option(names = "--yes", description = "Do not ask for confirmation.")
  boolean yes;

  @Option(names = "--reason", paramLabel = "TEXT", description = "Why, for the audit line.")
  String reason;

  @Override
  public Integer call() throws IOException {
    RedlockConfig config = nodes.config(spec, cli.env);
    try (RedlockAdmin admin = RedlockAdmin.create(config)) {
      int index = NodeOptions.position(spec, "--node", node, admin.nodes());
      String uri = admin.nodes().get(index);
      String key = NodeLife.lifeKey(config.keyPrefix());
      try (Jedis jedis = admin.connect(index)) {
        Map<String, String> server;
        try {
          server = NodeLife.info(jedis, "server");
        } catch (JedisDataException e) {
          cli.err.println(
              "redlock quarantine: "
                  + uri
                  + " refused INFO ("
                  + e.getMessage()
                  + "): its run_id cannot be read, and without +info no client counts its vote"
                  + " anyway; grant the user +info");
          return ExitCodes.FAILED;
        }
        String runId = server.get("run_id");
        String previous = jedis.get(key);
        long nowMicros = NodeLife.nodeMicros(jedis);
        cli.out.println(
            uri
                + ": run_id "
                + runId
                + ", up "
                + NodeLife.uptime(Long.parseLong(server.getOrDefault("uptime_in_seconds", "0"))));
        cli.out.println(
            "  "
                + key
                + " now: "
                + (previous == null ? "(none)" : previous)
                + (previous == null ? "" : describe(previous, runId, nowMicros, config)));
        cli.out.println(
            "  will set "
                + key
                + " = "
                + runId
                + ":0:<node time in µs>: every client keeps this node out of votes for maxTtl ("
                + Durations.format(config.settings().maxTtl())
                + " in this configuration) from then");
        if (!config.restartGuard()) {
          cli.out.println("  note: the restart guard is off in this configuration");
        }
        if (!yes) {
          String address = NodeOptions.address(uri);
          cli.out.print("Type the node's host:port (" + address + ") to quarantine it: ");
          cli.out.flush();
          String answer = cli.input().readLine();
          if (answer == null || !answer.trim().equals(address)) {
            cli.err.println("redlock: not confirmed; nothing was changed");
            return ExitCodes.CHECK_FAILED;
          }
        }
        String stamped = (String) jedis.eval(STAMP, List.of(key), List.of(runId));
        long epoch = NodeLife.Marker.parse(stamped).epochMicros();
        long until = epoch + config.settings().maxTtl().toNanos() / 1000;
        cli.out.println(
            "stamped "
                + key
                + " = "
                + stamped
                + " on "
                + uri
                + ": out of votes until "
                + NodeLife.instant(until)
                + " by the node's clock (maxTtl "
                + Durations.format(config.settings().maxTtl())
                + " from "
                + NodeLife.instant(epoch)
                + ")");
        audit.warn(
            "quarantine node={} by={} at={} run_id={} marker={} previous={} until={}",
            uri,
            operator(reason),
            Instant.now(),
            runId,
            stamped,
            previous,
            NodeLife.instant(until));
        return ExitCodes.OK;
      }
    }
  }

  private static String describe(String value, String runId, long nowMicros, RedlockConfig config) {
    NodeLife.Marker marker = NodeLife.Marker.parse(value);
    if (marker == null) {
      return " (not a life marker)";
    }
    long ageMicros = nowMicros - marker.epochMicros();
    return " ("
        + (marker.runId().equals(runId) ? "this process life" : "another process life")
        + ", epoch "
        + NodeLife.instant(marker.epochMicros())
        + (ageMicros < config.settings().maxTtl().toNanos() / 1000 ? ", still quarantined" : "")
        + ")";
  }
}
