package dev.redlock.cli;

import dev.redlock.Semaphore;
import dev.redlock.admin.LockStatus;
import dev.redlock.admin.ReadWriteStatus;
import dev.redlock.admin.RedlockAdmin;
import dev.redlock.admin.SemaphoreStatus;
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
          + " restart guard's quarantine; then the quorum's verdict: HELD, FREE or UNDECIDED.",
      "With --permits K, each NAME is a semaphore of K permits: each permit's status (permit i is"
          + " the lock of NAME@permit:i), after a line 'NAME: 2 of 3 permits held'.",
      "With --read-write, each NAME is a read-write lock: per node its writer, its live readers"
          + " (and the longest time one has left), a waiting writer's intent mark and the lock's"
          + " one fencing counter; then WRITE_HELD, READ_HELD, FREE or UNDECIDED."
    },
    footer = {
      "",
      "Exit status: 0 (whatever the verdict), 2 for bad flags or node list.",
      "",
      "Examples:",
      "  redlock status settlement payouts",
      "  redlock status --json settlement | jq .verdict",
      "  redlock status --permits 3 exports",
      "  redlock status --read-write --json prices | jq '.[0].verdict'"
    })
final class StatusCommand extends CliCommand {
  @Spec CommandLine.Model.CommandSpec spec;
  @Mixin NodeOptions nodes;

  @Option(names = "--json", description = "One JSON document (an array of resources) for scripts.")
  boolean json;

  @Option(
      names = "--permits",
      paramLabel = "K",
      description =
          "Each NAME is a semaphore of K permits (1 to "
              + Semaphore.MAX_PERMITS
              + ", as the clients give it): show each permit and how many are held.")
  Integer permits;

  @Option(
      names = "--read-write",
      description = "Each NAME is a read-write lock: show its writer, readers and intent mark.")
  boolean readWrite;

  @Parameters(
      arity = "1..*",
      paramLabel = "RESOURCE",
      description = "The resources to look at (semaphore or read-write lock names with the flags).")
  List<String> resources;

  @Override
  public Integer call() {
    checkKind(spec, permits, readWrite);
    List<Object> statuses = new ArrayList<>();
    try (RedlockAdmin admin = RedlockAdmin.create(nodes.config(spec, cli.env))) {
      for (String resource : resources) {
        try {
          if (permits != null) {
            statuses.add(admin.semaphoreStatus(resource, permits));
          } else if (readWrite) {
            statuses.add(admin.readWriteStatus(resource));
          } else {
            statuses.add(admin.status(resource));
          }
        } catch (IllegalArgumentException e) {
          throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
      }
    }
    if (json) {
      StringBuilder j = new StringBuilder("[");
      for (int i = 0; i < statuses.size(); i++) {
        Object status = statuses.get(i);
        j.append(i == 0 ? "" : ",");
        if (status instanceof SemaphoreStatus s) {
          appendJson(j, s);
        } else if (status instanceof ReadWriteStatus s) {
          appendJson(j, s);
        } else {
          appendJson(j, (LockStatus) status);
        }
      }
      cli.out.println(j.append(']'));
    } else {
      for (Object status : statuses) {
        if (status instanceof SemaphoreStatus s) {
          print(s);
        } else if (status instanceof ReadWriteStatus s) {
          print(s);
        } else {
          print((LockStatus) status);
        }
      }
    }
    return ExitCodes.OK;
  }

  /**
   * Refuses --permits and --read-write together, and a number of permits no semaphore has, naming
   * the flag (status and release share the rules).
   *
   * @throws CommandLine.ParameterException for a bad combination or number
   */
  static void checkKind(CommandLine.Model.CommandSpec spec, Integer permits, boolean readWrite) {
    if (permits != null && readWrite) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--permits and --read-write exclude each other: a name is a semaphore (--permits K) or a"
              + " read-write lock (--read-write), not both");
    }
    if (permits != null && (permits < 1 || permits > Semaphore.MAX_PERMITS)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--permits must be between 1 and "
              + Semaphore.MAX_PERMITS
              + " (a semaphore's number of permits), was "
              + permits);
    }
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

  private void print(SemaphoreStatus s) {
    long undecided =
        s.permits().stream().filter(p -> p.verdict() == LockStatus.Verdict.UNDECIDED).count();
    cli.out.println(
        s.name()
            + ": "
            + s.held()
            + " of "
            + s.permits().size()
            + " permits held"
            + (undecided == 0 ? "" : " (" + undecided + " undecided)"));
    s.permits().forEach(this::print);
    if (!s.heldBeyond().isEmpty()) {
      cli.out.println("  " + beyond(s));
    }
  }

  /** The warning for permits held past the number asked about (shared with release). */
  static String beyond(SemaphoreStatus s) {
    return "WARNING: permit(s) "
        + s.heldBeyond().stream()
            .map(String::valueOf)
            .collect(java.util.stream.Collectors.joining(", "))
        + " held on a node too: clients may use more than --permits "
        + s.permits().size()
        + "; ask with the number they use";
  }

  private void print(ReadWriteStatus s) {
    ReadWriteStatus.Verdict verdict = s.verdict();
    String by =
        switch (verdict) {
          case WRITE_HELD -> " by " + s.writer();
          case READ_HELD ->
              " by "
                  + s.readers().size()
                  + " reader(s)"
                  + (s.readers().isEmpty() ? "" : " " + String.join(" ", s.readers()));
          default -> "";
        };
    cli.out.println(
        s.name()
            + ": "
            + verdict
            + by
            + (s.writerWaiting() ? ", a writer waits" : "")
            + " (quorum "
            + s.quorum()
            + " of "
            + s.nodes().size()
            + ")");
    for (ReadWriteStatus.Node n : s.nodes()) {
      StringBuilder line = new StringBuilder("  ").append(n.node()).append("  ");
      if (!n.reachable()) {
        line.append("unreachable: ").append(n.error());
      } else {
        line.append(
            n.writerHeld()
                ? "writer held  ttl " + Durations.format(n.writerTtl()) + "  owner " + n.writer()
                : "writer free");
        line.append("  readers ").append(n.readerCount());
        if (n.readerCount() > 0) {
          line.append(" (longest ttl ").append(Durations.format(n.longestReaderTtl())).append(')');
        }
        if (n.intentMarked()) {
          line.append("  intent mark ").append(Durations.format(n.intentTtl()));
        }
        line.append("  fence ").append(n.fencingCounter());
        if (!n.quarantine().isZero()) {
          line.append("  quarantined ").append(Durations.format(n.quarantine()));
        }
      }
      cli.out.println(line);
    }
  }

  private static void appendJson(StringBuilder j, LockStatus s) {
    j.append("{\"resource\":")
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

  private static void appendJson(StringBuilder j, SemaphoreStatus s) {
    j.append("{\"semaphore\":")
        .append(Json.string(s.name()))
        .append(",\"permits\":")
        .append(s.permits().size())
        .append(",\"held\":")
        .append(s.held())
        .append(",\"heldBeyond\":")
        .append(s.heldBeyond())
        .append(",\"permitStatus\":[");
    for (int i = 0; i < s.permits().size(); i++) {
      appendJson(j.append(i == 0 ? "" : ","), s.permits().get(i));
    }
    j.append("]}");
  }

  private static void appendJson(StringBuilder j, ReadWriteStatus s) {
    j.append("{\"readWriteLock\":")
        .append(Json.string(s.name()))
        .append(",\"verdict\":")
        .append(Json.string(s.verdict().name()))
        .append(",\"writer\":")
        .append(Json.string(s.writer()))
        .append(",\"readers\":");
    strings(j, s.readers());
    j.append(",\"writerWaiting\":")
        .append(s.writerWaiting())
        .append(",\"quorum\":")
        .append(s.quorum())
        .append(",\"nodes\":[");
    for (int k = 0; k < s.nodes().size(); k++) {
      ReadWriteStatus.Node n = s.nodes().get(k);
      j.append(k == 0 ? "" : ",")
          .append("{\"node\":")
          .append(Json.string(n.node()))
          .append(",\"reachable\":")
          .append(n.reachable())
          .append(",\"error\":")
          .append(Json.string(n.error()))
          .append(",\"writerHeld\":")
          .append(n.writerHeld())
          .append(",\"writerTtlMillis\":")
          .append(n.writerTtl().toMillis())
          .append(",\"writer\":")
          .append(Json.string(n.writer()))
          .append(",\"readers\":");
      strings(j, n.readers());
      j.append(",\"readerCount\":")
          .append(n.readerCount())
          .append(",\"longestReaderTtlMillis\":")
          .append(n.longestReaderTtl().toMillis())
          .append(",\"intentTtlMillis\":")
          .append(n.intentTtl().toMillis())
          .append(",\"fencingCounter\":")
          .append(n.fencingCounter())
          .append(",\"quarantineMillis\":")
          .append(n.quarantine().toMillis())
          .append('}');
    }
    j.append("]}");
  }

  private static void strings(StringBuilder j, List<String> values) {
    j.append('[');
    for (int i = 0; i < values.size(); i++) {
      j.append(i == 0 ? "" : ",").append(Json.string(values.get(i)));
    }
    j.append(']');
  }
}
