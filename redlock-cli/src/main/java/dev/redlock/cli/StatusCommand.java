package dev.redlock.cli;

import dev.redlock.LockStatus;
import dev.redlock.RedlockAdmin;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description = {
      "Shows, per node, whether RESOURCE's lock is held, for how long, by whom (an 8-hex hash of"
          + " the owner token, as in the audit log; never the token), the fencing counter and the"
          + " restart guard's quarantine; then the quorum's verdict: HELD, FREE or UNDECIDED."
    },
    footer = {
      "",
      "Exit status: 0 (whatever the verdict), 2 for bad flags or node list.",
      "",
      "Examples:",
      "  redlock status settlement payouts",
      "  redlock status --json settlement | jq .verdict"
    })
final class StatusCommand extends CliCommand {
  @Spec CommandLine.Model.CommandSpec spec;
  @Mixin NodeOptions nodes;

  @Option(names = "--json", description = "One JSON document (an array of resources) for scripts.")
  boolean json;

  @Parameters(arity = "1..*", paramLabel = "RESOURCE", description = "The resources to look at.")
  List<String> resources;

  @Override
  public Integer call() {
    List<LockStatus> statuses = new ArrayList<>();
    try (RedlockAdmin admin = RedlockAdmin.create(nodes.config(spec, cli.env))) {
      for (String resource : resources) {
        try {
          statuses.add(admin.status(resource));
        } catch (IllegalArgumentException e) {
          throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
      }
    }
    if (json) {
      cli.out.println(toJson(statuses));
    } else {
      statuses.forEach(this::print);
    }
    return ExitCodes.OK;
  }

  private void print(LockStatus s) {
    LockStatus.Verdict verdict = s.verdict();
    cli.out.println(
        s.resource()
            + ": "
            + verdict
            + (verdict == LockStatus.Verdict.HELD ? " by " + s.owner() : "")
            + " (quorum "
            + s.quorum()
            + " of "
            + s.nodes().size()
            + ")");
    for (LockStatus.Node n : s.nodes()) {
      StringBuilder line = new StringBuilder("  ").append(n.node()).append("  ");
      if (!n.reachable()) {
        line.append("unreachable: ").append(n.error());
      } else {
        line.append(
            n.held() ? "held  ttl " + Durations.format(n.ttl()) + "  owner " + n.owner() : "free");
        line.append("  fence ").append(n.fencingCounter());
        if (!n.quarantine().isZero()) {
          line.append("  quarantined ").append(Durations.format(n.quarantine()));
        }
      }
      cli.out.println(line);
    }
  }

  static String toJson(List<LockStatus> statuses) {
    StringBuilder j = new StringBuilder("[");
    for (int i = 0; i < statuses.size(); i++) {
      LockStatus s = statuses.get(i);
      j.append(i == 0 ? "" : ",")
          .append("{\"resource\":")
          .append(Json.string(s.resource()))
          .append(",\"verdict\":")
          .append(Json.string(s.verdict().name()))
          .append(",\"owner\":")
          .append(Json.string(s.owner()))
          .append(",\"quorum\":")
          .append(s.quorum())
          .append(",\"nodes\":[");
      for (int k = 0; k < s.nodes().size(); k++) {
        LockStatus.Node n = s.nodes().get(k);
        j.append(k == 0 ? "" : ",")
            .append("{\"node\":")
            .append(Json.string(n.node()))
            .append(",\"reachable\":")
            .append(n.reachable())
            .append(",\"error\":")
            .append(Json.string(n.error()))
            .append(",\"held\":")
            .append(n.held())
            .append(",\"ttlMillis\":")
            .append(n.ttl().toMillis())
            .append(",\"owner\":")
            .append(Json.string(n.owner()))
            .append(",\"fencingCounter\":")
            .append(n.fencingCounter())
            .append(",\"quarantineMillis\":")
            .append(n.quarantine().toMillis())
            .append('}');
      }
      j.append("]}");
    }
    return j.append(']').toString();
  }
}
