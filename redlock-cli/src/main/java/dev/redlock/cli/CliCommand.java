package dev.redlock.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.util.concurrent.Callable;

/** A subcommand: it gets the CLI's streams and environment from the factory. */
abstract class CliCommand implements Callable<Integer> {
  RedlockCli cli;

  /** Who is at the keyboard, for audit lines: {@code user@host}, and the reason if given. */
  String operator(String reason) {
    String user = System.getProperty("user.name", "unknown");
    String host = cli.env.getOrDefault("HOSTNAME", "");
    if (host.isBlank()) {
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (IOException e) {
        host = "unknown-host";
      }
    }
    return user + "@" + host + (reason == null ? "" : " reason=" + Json.string(reason));
  }
}
