package dev.redlock.cli;

import dev.redlock.admin.LockStatus;
import dev.redlock.admin.ReadWriteStatus;
import dev.redlock.admin.RedlockAdmin;
import dev.redlock.admin.SemaphoreStatus;
import java.io.IOException;
import java.util.ArrayList;
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
          + " then (the counter is raised past every token handed out, so a fenced store still"
          + " refuses the old holder).",
      "With --permits K, RESOURCE is a semaphore of K permits: every permit is broken, or only"
          + " permit I with --permit I (the lock of RESOURCE@permit:I, I from 0).",
      "With --read-write, RESOURCE is a read-write lock: its writer, every reader and a waiting"
          + " writer's intent mark are removed, and its one fencing counter raised.",
      "Asks you to type the resource name, unless --yes. Logged on the dev.redlock.audit logger"
          + " with who and when."
    },
    footer = {
      "",
      "Exit statuses: 0 released, 1 not confirmed, 2 bad flags (including a missing --force).",
      "",
      "Examples:",
      "  redlock release --force settlement",
      "  redlock release --force --yes --reason 'host db-7 died, INC-4411' settlement",
      "  redlock release --force --permits 3 --permit 1 exports",
      "  redlock release --force --read-write prices"
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

  @Option(
      names = "--permits",
      paramLabel = "K",
      description = "RESOURCE is a semaphore of K permits (as the clients give it).")
  Integer permits;

  @Option(
      names = "--permit",
      paramLabel = "I",
      description = "With --permits: break only permit I (0 to K-1), not every permit.")
  Integer permit;

  @Option(
      names = "--read-write",
      description = "RESOURCE is a read-write lock: break its writer and every reader.")
  boolean readWrite;

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
    StatusCommand.checkKind(spec, permits, readWrite);
    if (permit != null && permits == null) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--permit I needs --permits K: the semaphore's number of permits, as the clients give"
              + " it");
    }
    if (permit != null && (permit < 0 || permit >= permits)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--permit must be between 0 and "
              + (permits - 1)
              + " (--permits "
              + permits
              + "), was "
              + permit);
    }
    try (RedlockAdmin admin = RedlockAdmin.create(nodes.config(spec, cli.env))) {
      List<String> toBreak;
      try {
        toBreak = showWhatBreaks(admin);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
      if (!yes) {
        cli.out.print("Type the resource name to break its lock: ");
        cli.out.flush();
        String answer = cli.input().readLine();
        if (answer == null || !answer.trim().equals(resource)) {
          cli.err.println("redlock: not confirmed; nothing was changed");
          return ExitCodes.CHECK_FAILED;
        }
      }
      String operator = operator(reason);
      if (readWrite) {
        admin.forceReleaseReadWrite(resource, operator).forEach(r -> cli.out.println("  " + r));
      } else {
        for (String lock : toBreak) {
          if (permits != null) {
            cli.out.println(lock + ":");
          }
          admin.forceRelease(lock, operator).forEach(r -> cli.out.println("  " + r));
        }
      }
      return ExitCodes.OK;
    }
  }

  /**
   * Prints the state of what is about to be broken; returns the plain locks to break (none for a
   * read-write lock, which is broken as one).
   *
   * @throws IllegalArgumentException for a name the admin refuses
   */
  private List<String> showWhatBreaks(RedlockAdmin admin) {
    if (readWrite) {
      ReadWriteStatus before = admin.readWriteStatus(resource);
      ReadWriteStatus.Verdict verdict = before.verdict();
      cli.out.println(
          resource
              + ": "
              + verdict
              + (verdict == ReadWriteStatus.Verdict.WRITE_HELD ? " by " + before.writer() : "")
              + (verdict == ReadWriteStatus.Verdict.READ_HELD
                  ? " by " + before.readers().size() + " reader(s)"
                  : "")
              + (before.writerWaiting() ? ", a writer waits" : ""));
      return List.of();
    }
    if (permits != null) {
      SemaphoreStatus before = admin.semaphoreStatus(resource, permits);
      cli.out.println(resource + ": " + before.held() + " of " + permits + " permits held");
      if (!before.heldBeyond().isEmpty()) {
        cli.err.println(StatusCommand.beyond(before) + " (those are not broken)");
      }
      List<String> locks = new ArrayList<>();
      for (int i = 0; i < permits; i++) {
        if (permit == null || permit == i) {
          LockStatus p = before.permits().get(i);
          cli.out.println("  " + describe(p));
          locks.add(p.resource());
        }
      }
      return locks;
    }
    LockStatus before = admin.status(resource);
    cli.out.println(describe(before));
    return List.of(resource);
  }

  private static String describe(LockStatus s) {
    return s.resource() + ": " + s.verdict() + (s.owner() == null ? "" : " by " + s.owner());
  }
}
