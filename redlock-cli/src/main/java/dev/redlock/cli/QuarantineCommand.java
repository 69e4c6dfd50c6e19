package dev.redlock.cli;

import dev.redlock.admin.RedlockAdmin;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import java.io.IOException;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import redis.clients.jedis.Jedis;

@Command(
    name = "quarantine",
    mixinStandardHelpOptions = true,
    description = {
      "Keeps one node out of every client's votes for maxTtl from its next acquisition, by deleting"
          + " the restart guard's life marker and witness ({prefix}@life, {prefix}@witness): as"
          + " for a node whose data is gone. For data put onto a running node in a way the guard"
          + " cannot see (a COPY of the guard's keys into another database swapped in with"
          + " SWAPDB, or keys edited by hand).",
      "A restart, a resync from a master, DEBUG RELOAD, a flush or a RESTORE needs no quarantine"
          + " command: the guard sees them. Asks you to type the node's host:port, unless --yes."
          + " Logged on the dev.redlock.audit logger with who and when."
    },
    footer = {
      "",
      "Exit statuses: 0 done, 1 not confirmed, 2 bad flags or a node not in the list,"
          + " 125 the node could not be reached or read.",
      "",
      "Examples:",
      "  redlock quarantine --node redis://10.0.0.2:6379",
      "  redlock quarantine --node 2 --yes --reason 'swapped in a copy of db 0, INC-4412'"
    })
final class QuarantineCommand extends CliCommand {
  private static final Logger audit = LoggerFactory.getLogger("dev.redlock.audit");

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
      String life = NodeLife.lifeKey(config.keyPrefix());
      String witness = NodeLife.witnessKey(config.keyPrefix());
      RedlockAdmin.GuardView before = admin.restartGuard(index);
      if (before.unknown() != null) {
        cli.err.println("redlock quarantine: " + uri + ": " + before.unknown());
        return ExitCodes.FAILED;
      }
      cli.out.println(uri + ": " + DoctorCommand.describe(before, config));
      cli.out.println(
          "  will delete "
              + life
              + " and "
              + witness
              + ": the next acquire keeps this node out of votes for maxTtl ("
              + Durations.format(config.maxTtl())
              + " in this configuration) from then");
      if (config.restartGuard() == RestartGuard.OFF) {
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
      try (Jedis jedis = admin.connect(index)) {
        jedis.del(life, witness);
      }
      cli.out.println(
          "deleted "
              + life
              + " and "
              + witness
              + " on "
              + uri
              + ": out of votes for maxTtl from the next acquire");
      audit.warn(
          "quarantine node={} by={} at={} previous={}",
          uri,
          operator(reason),
          Instant.now(),
          before.marker());
      return ExitCodes.OK;
    }
  }
}
