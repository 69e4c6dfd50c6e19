package dev.redlock.cli;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.admin.LockStatus;
import dev.redlock.admin.RedlockAdmin;
import dev.redlock.config.RedlockConfig;
import java.io.IOException;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
      "Acquires the lock on RESOURCE, runs COMMAND while renewing it, releases it when COMMAND"
          + " exits, and exits with COMMAND's status.",
      "COMMAND gets REDLOCK_RESOURCE and REDLOCK_FENCING_TOKEN in its environment: pass the token"
          + " to the store you write to, so it can refuse a stale holder.",
      "If the lease is lost (a majority of nodes unreachable for a ttl), COMMAND gets SIGTERM, then"
          + " SIGKILL after --grace."
    },
    footer = {
      "",
      "Exit statuses:",
      "  COMMAND's own status   the lock was held throughout",
      "  75                     the lock was not acquired within --wait",
      "  76                     the lease was lost; COMMAND was terminated",
      "  2                      bad flags or node list",
      "  126 / 127              COMMAND cannot be run / was not found",
      "  125                    redlock itself failed",
      "",
      "Examples:",
      "  redlock run settlement -- ./settle.sh 2026-11-30",
      "  redlock run --ttl 1m --wait 0s --nodes redis://a:6379,redis://b:6379,redis://c:6379 \\",
      "      payouts -- python payouts.py"
    })
final class RunCommand extends CliCommand {
  @Spec CommandLine.Model.CommandSpec spec;
  @Mixin NodeOptions nodes;

  @Option(
      names = "--ttl",
      defaultValue = "30s",
      description = "The lease's time to live, renewed every ttl/3 (default: ${DEFAULT-VALUE}).")
  Duration ttl;

  @Option(
      names = "--wait",
      defaultValue = "10s",
      description = "How long to try to acquire before giving up (default: ${DEFAULT-VALUE}).")
  Duration wait;

  @Option(
      names = "--grace",
      defaultValue = "10s",
      description =
          "After a lost lease, how long COMMAND has between SIGTERM and SIGKILL (default:"
              + " ${DEFAULT-VALUE}).")
  Duration grace;

  @Parameters(index = "0", paramLabel = "RESOURCE", description = "What to lock.")
  String resource;

  @Parameters(
      index = "1..*",
      arity = "1..*",
      paramLabel = "COMMAND",
      description = "The command and its arguments (after --).")
  List<String> command;

  @Override
  public Integer call() throws Exception {
    if (grace.isNegative()) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--grace must be >= 0, was " + grace);
    }
    RedlockConfig config = nodes.config(spec, cli.env);
    try (Redlock redlock = Redlock.create(config)) {
      Lease lease;
      try {
        lease = redlock.acquire(resource, ttl, wait);
      } catch (LockUnavailableException e) {
        cli.err.println("redlock: " + e.getMessage());
        String quarantine = quarantine(config, e);
        if (quarantine != null) {
          cli.err.println("redlock: " + quarantine);
        }
        return ExitCodes.NOT_ACQUIRED;
      } catch (IllegalArgumentException e) {
        throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
      }
      try {
        return runUnder(lease);
      } finally {
        lease.release();
      }
    }
  }

  /**
   * One line for an attempt the restart guard's quarantine lost: how many nodes sit out, until when
   * a quorum can form (the nodes' own count of what is left, read with {@code status}), and what to
   * do if they are new; or null if no node was quarantined, or the lock is held elsewhere.
   */
  static String quarantine(RedlockConfig config, LockUnavailableException e) {
    List<NodeOutcome> outcomes = e.nodeOutcomes();
    List<Integer> quarantined = new ArrayList<>();
    int couldVote = 0; // nodes whose yes would count now
    for (int i = 0; i < outcomes.size(); i++) {
      switch (outcomes.get(i).status()) {
        case QUARANTINED -> quarantined.add(i);
        case OK, PENDING, SKIPPED -> couldVote++;
        default -> {} // failed, silent, or held elsewhere
      }
    }
    if (quarantined.isEmpty() || e.reason() != LockUnavailableException.Reason.QUORUM_UNREACHABLE) {
      return null;
    }
    int quorum = config.quorum();
    int needed = quorum - couldVote; // how many of the quarantined must come back
    List<Duration> left = new ArrayList<>();
    try (RedlockAdmin admin = RedlockAdmin.create(config)) {
      List<LockStatus.Node> nodes = admin.status(e.resource()).nodes();
      for (int i : quarantined) {
        left.add(nodes.get(i).quarantine());
      }
    }
    left.sort(null);
    boolean one = quarantined.size() == 1;
    String head =
        quarantined.size()
            + " of "
            + outcomes.size()
            + " nodes "
            + (one ? "is" : "are")
            + " in the restart guard's quarantine (restarted, flushed or new)";
    if (needed > quarantined.size()) {
      return head
          + ", and "
          + (outcomes.size() - couldVote - quarantined.size())
          + " failed or hold the lock for another owner: no quorum ("
          + quorum
          + " of "
          + outcomes.size()
          + ") even once the quarantine ends; see 'redlock status "
          + e.resource()
          + "' and 'redlock doctor'";
    }
    Duration wait = left.get(Math.max(0, needed - 1));
    return head
        + " until "
        + LocalTime.now().plus(wait).format(DateTimeFormatter.ofPattern("HH:mm:ss"))
        + " ("
        + Durations.format(wait)
        + "): no quorum ("
        + quorum
        + " of "
        + outcomes.size()
        + ") before then; if "
        + (one ? "it is" : "they are")
        + " new and never served a lock, 'redlock init-nodes' lets "
        + (one ? "it" : "them")
        + " vote now";
  }

  private int runUnder(Lease lease) throws InterruptedException {
    // Renewal first: a ttl too short to renew, or a lease already lost, must stop us before the
    // command runs, never leave it running unguarded.
    try {
      lease.keepAlive();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    } catch (LeaseLostException e) {
      cli.err.println(
          "redlock: lost the lease on '"
              + resource
              + "' before starting the command: "
              + e.getMessage());
      return ExitCodes.LEASE_LOST;
    }
    ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
    builder.environment().put("REDLOCK_RESOURCE", resource);
    builder.environment().put("REDLOCK_FENCING_TOKEN", Long.toString(lease.fencingToken()));
    Process child;
    try {
      child = builder.start();
    } catch (IOException e) {
      cli.err.println("redlock: cannot run " + command.get(0) + ": " + e.getMessage());
      return e.getMessage() != null && e.getMessage().contains("error=2")
          ? ExitCodes.NOT_FOUND
          : ExitCodes.NOT_EXECUTABLE;
    }
    AtomicReference<LeaseLostException> lost = new AtomicReference<>();
    lease.onLost(
        loss -> {
          lost.set(loss);
          cli.err.println(
              "redlock: lost the lease on '"
                  + resource
                  + "' ("
                  + loss.getMessage()
                  + ");"
                  + " stopping pid "
                  + child.pid());
          Thread stopper = new Thread(() -> terminate(child), "redlock-run-stop");
          stopper.setDaemon(true);
          stopper.start();
        });
    // If redlock itself is told to stop, the command stops too, and the lease is released.
    Thread onExit = new Thread(() -> terminate(child), "redlock-run-exit");
    Runtime.getRuntime().addShutdownHook(onExit);
    try {
      int status = child.waitFor();
      return lost.get() != null ? ExitCodes.LEASE_LOST : status;
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(onExit);
      } catch (IllegalStateException shuttingDown) {
        // the hook is running: it stops the command
      }
    }
  }

  /** SIGTERM, then SIGKILL after the grace period; returns once the command is gone. */
  private void terminate(Process child) {
    if (!child.isAlive()) {
      return;
    }
    child.destroy();
    try {
      if (!child.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        cli.err.println(
            "redlock: pid " + child.pid() + " ignored SIGTERM for " + grace + "; SIGKILL");
        child.destroyForcibly();
        child.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      child.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
