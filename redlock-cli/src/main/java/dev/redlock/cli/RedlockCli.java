package dev.redlock.cli;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code redlock} command: {@code run}, {@code status}, {@code doctor}, {@code release}, {@code
 * quarantine}, {@code init-nodes}.
 *
 * <p>Exit statuses are part of the interface (see {@link ExitCodes}); {@link #execute} returns
 * them, {@link #main} exits with them.
 */
@Command(
    name = "redlock",
    mixinStandardHelpOptions = true,
    versionProvider = RedlockCli.Version.class,
    subcommands = {
      RunCommand.class,
      StatusCommand.class,
      DoctorCommand.class,
      ReleaseCommand.class,
      QuarantineCommand.class,
      InitNodesCommand.class,
      CommandLine.HelpCommand.class
    },
    description = {
      "A distributed lock over N independent Redis nodes (Redlock), from the shell.",
      "",
      "Nodes come from --nodes, else --config (redlock.* properties), else $REDLOCK_NODES."
    },
    footer = {
      "",
      "Examples:",
      "  export REDLOCK_NODES=redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379",
      "  redlock doctor",
      "  redlock run --ttl 30s --wait 10s settlement -- ./settle.sh 2026-11-30",
      "  redlock status settlement",
      "  redlock release --force settlement",
      "  redlock status --permits 3 exports",
      "  redlock status --read-write prices",
      "  redlock quarantine --node redis://10.0.0.2:6379",
      "  redlock init-nodes --node redis://10.0.0.4:6379",
      "",
      "Exit statuses: see 'redlock help run' and docs/operations.md."
    })
public final class RedlockCli {
  final Map<String, String> env;
  final InputStream in;
  final PrintStream out;
  final PrintStream err;

  RedlockCli(Map<String, String> env, InputStream in, PrintStream out, PrintStream err) {
    this.env = env;
    this.in = in;
    this.out = out;
    this.err = err;
  }

  public static void main(String[] args) {
    System.exit(execute(args, System.getenv(), System.in, System.out, System.err));
  }

  /** Runs the command line and returns its exit status (for tests and embedding). */
  public static int execute(
      String[] args, Map<String, String> env, InputStream in, PrintStream out, PrintStream err) {
    RedlockCli cli = new RedlockCli(env, in, out, err);
    CommandLine line = new CommandLine(cli, new Factory(cli));
    line.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
    line.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
    line.setExitCodeExceptionMapper(e -> ExitCodes.FAILED);
    line.setExecutionExceptionHandler(
        (e, cmd, parsed) -> {
          if (e instanceof CommandLine.ParameterException usage) {
            // Found while running (the node list, a ttl the nodes' rules refuse): a usage error.
            cmd.getErr().println(name(cmd) + ": " + usage.getMessage());
            cmd.getErr().println("Try '" + name(cmd) + " --help'.");
            return ExitCodes.USAGE;
          }
          cmd.getErr().println("redlock: " + e);
          return ExitCodes.FAILED;
        });
    line.setParameterExceptionHandler(
        (e, args2) -> {
          CommandLine cmd = e.getCommandLine();
          cmd.getErr().println(name(cmd) + ": " + e.getMessage());
          cmd.getErr().println("Try '" + name(cmd) + " --help'.");
          return ExitCodes.USAGE;
        });
    line.registerConverter(java.time.Duration.class, Durations::parse);
    if (args.length == 0) { // no subcommand: say what there is, as a usage error
      line.usage(line.getErr());
      return ExitCodes.USAGE;
    }
    return line.execute(args);
  }

  /** {@code redlock}, or {@code redlock run} for a subcommand. */
  private static String name(CommandLine cmd) {
    return cmd.getParent() == null ? "redlock" : "redlock " + cmd.getCommandName();
  }

  BufferedReader input() {
    return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
  }

  /** Gives every subcommand the CLI's streams and environment. */
  private record Factory(RedlockCli cli) implements CommandLine.IFactory {
    @Override
    public <K> K create(Class<K> type) throws Exception {
      if (CliCommand.class.isAssignableFrom(type)) {
        K command = CommandLine.defaultFactory().create(type);
        ((CliCommand) command).cli = cli;
        return command;
      }
      return CommandLine.defaultFactory().create(type);
    }
  }

  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = RedlockCli.class.getPackage().getImplementationVersion();
      return new String[] {"redlock " + (v == null ? "(development build)" : v)};
    }
  }
}
