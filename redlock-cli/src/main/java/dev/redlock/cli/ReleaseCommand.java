package dev.redlock.cli;

import dev.redlock.LockStatus;
import dev.redlock.RedlockAdmin;
import java.io.IOException;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "release",
    mixinStandardHelpOptions = true,
    description = {
      "Breaks RESOURCE's lock on every node, whoever holds it: for a lock whose holder is known to"
          + " be gone (its host died before its ttl ended, or a ttl far too long was used).",
      "If the holder still runs, two holders may now overlap: only fencing tokens protect the data"
          + " then (the counter is kept, so a fenced store still refuses the old holder).",
      "Asks you to type the resource name, unless --yes. Logged on the dev.redlock.audit logger"
          + " with who and when."
    },
    footer = {
      "",
      "Exit statuses: 0 released, 1 not confirmed, 2 bad flags (including a missing --force).",
      "",
      "Examples:",
      "  redlock release --force settlement",
      "  redlock release --force --yes --reason 'host db-7 died, INC-4411' settlement"
    })
final class ReleaseCommand extends CliCommand {
  @Spec CommandLine.Model.CommandSpec spec;
  @Mixin NodeOptions nodes;

  @Option(names = "--force", description = "Required: says you mean to break someone's lock.")
  boolean force;

  @Option(names = "--yes", description = "Do not ask for confirmation.")
  boolean yes;

  @Option(names = "--reason", paramLabel = "TEXT", description = "Why, for the audit line.")
  String reason;

  @Parameters(index = "0", paramLabel = "RESOURCE", description = "The lock to break.")
  String resource;

  @Override
  public Integer call() throws IOException {
    if (!force) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "release breaks a lock someone else holds: add --force (and --yes to skip the"
              + " question). A program releases its own lock by closing its lease.");
    }
    try (RedlockAdmin admin = RedlockAdmin.create(nodes.config(spec, cli.env))) {
      LockStatus before;
      try {
        before = admin.status(resource);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
      cli.out.println(
          resource
              + ": "
              + before.verdict()
              + (before.owner() == null ? "" : " by " + before.owner()));
      if (!yes) {
        cli.out.print("Type the resource name to break its lock: ");
        cli.out.flush();
        String answer = cli.input().readLine();
        if (answer == null || !answer.trim().equals(resource)) {
          cli.err.println("redlock: not confirmed; nothing was changed");
          return ExitCodes.CHECK_FAILED;
        }
      }
      List<String> results = admin.forceRelease(resource, operator(reason));
      results.forEach(r -> cli.out.println("  " + r));
      return ExitCodes.OK;
    }
  }
}
