package dev.redlock.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The mechanics of a node's {@code redis-server} process, apart from the node's faults: its command
 * line, the signals sent to it by PID, its end by SIGKILL, its log.
 */
final class ServerProcess {
  private ServerProcess() {}

  /** The command line of a node's process, with the arguments of {@code mode}. */
  static List<String> command(
      RedisBinary binary, int port, Path dir, TlsFiles tls, int tlsPort, Persistence mode) {
    List<String> command =
        new ArrayList<>(
            List.of(
                binary.path().toString(),
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--dir",
                dir.toString(),
                "--daemonize",
                "no",
                "--protected-mode",
                "no",
                "--logfile",
                ""));
    if (tls != null) {
      command.addAll(
          List.of(
              "--tls-port",
              Integer.toString(tlsPort),
              "--tls-cert-file",
              tls.serverCert().toString(),
              "--tls-key-file",
              tls.serverKey().toString(),
              "--tls-ca-cert-file",
              tls.caCert().toString(),
              "--tls-auth-clients",
              "no"));
    }
    if (!binary.version().startsWith("6.")) {
      // Redis 7 refuses DEBUG unless enabled (6.2 has no such switch and always allows it): stall()
      command.addAll(List.of("--enable-debug-command", "local"));
    }
    // "--save 3600 1" as two arguments: Redis 6.2 wants the pairs apart, 7.x takes both forms.
    switch (mode) {
      case NONE -> command.addAll(List.of("--save", "", "--appendonly", "no"));
      case AOF ->
          command.addAll(List.of("--save", "", "--appendonly", "yes", "--appendfsync", "always"));
      case RDB -> command.addAll(List.of("--save", "3600", "1", "--appendonly", "no"));
      case AOF_EVERYSEC ->
          command.addAll(List.of("--save", "", "--appendonly", "yes", "--appendfsync", "everysec"));
    }
    return command;
  }

  /** Sends SIG{@code name} to {@code process} with kill(1). */
  static void signal(Process process, String name) {
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
              .redirectErrorStream(true)
              .start();
      String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!waitUninterruptibly(kill) || kill.exitValue() != 0) {
        throw new MissingToolException(
            "kill -" + name + " " + process.pid() + " failed: " + out.trim());
      }
    } catch (IOException e) {
      throw new MissingToolException(
          "cannot run kill(1) to send SIG" + name + ": " + e.getMessage(), e);
    }
  }

  /**
   * Waits up to 10 s for a process to end, even if this thread is interrupted meanwhile: a fault
   * half-applied would leave the test in an unknown state. The interrupt flag is set again after.
   */
  private static boolean waitUninterruptibly(Process p) {
    boolean interrupted = false;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    try {
      while (true) {
        try {
          return p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Kills {@code process} with SIGKILL and waits until it is gone. */
  static void kill(Process process) {
    process.destroyForcibly(); // SIGKILL works on a stopped process too
    if (!waitUninterruptibly(process)) {
      throw new IllegalStateException(
          "redis-server pid " + process.pid() + " did not die after SIGKILL");
    }
    Processes.unregister(process);
  }

  /** What the process wrote to {@code log} from byte {@code offset} on; "" if unreadable. */
  static String logSince(Path log, long offset) {
    try {
      byte[] all = Files.readAllBytes(log);
      int from = (int) Math.min(offset, all.length);
      return new String(all, from, all.length - from, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  /** The last lines of {@code log}, for a message. */
  static String logTail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    } catch (IOException e) {
      return "(no log)";
    }
  }
}
