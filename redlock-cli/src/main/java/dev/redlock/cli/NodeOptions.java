package dev.redlock.cli;

import dev.redlock.config.RedlockConfig;
import java.io.IOException;
import java.io.Reader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** Where the nodes come from: --nodes, else --config, else $REDLOCK_NODES. */
final class NodeOptions {
  @Option(
      names = "--nodes",
      split = ",",
      paramLabel = "URI",
      description =
          "The nodes, comma separated: redis://[user:password@]host:port[/db], rediss:// for TLS.")
  List<String> nodes;

  @Option(
      names = "--config",
      paramLabel = "FILE",
      description =
          "A properties file with redlock.* keys (as RedlockConfig.fromProperties reads them);"
              + " --nodes overrides its redlock.nodes.")
  Path config;

  /**
   * The configuration, or a usage error that says what is wrong.
   *
   * @throws CommandLine.ParameterException for a missing node list, an unreadable file or a bad
   *     value
   */
  RedlockConfig config(CommandLine.Model.CommandSpec spec, Map<String, String> env) {
    Properties properties = new Properties();
    if (config != null) {
      try (Reader reader = Files.newBufferedReader(config, StandardCharsets.UTF_8)) {
        properties.load(reader);
      } catch (IOException e) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--config " + config + ": cannot read it: " + e.getMessage());
      }
    }
    if (nodes != null && !nodes.isEmpty()) {
      properties.setProperty("redlock.nodes", String.join(",", nodes));
    } else if (properties.getProperty("redlock.nodes") == null) {
      String fromEnv = env.get("REDLOCK_NODES");
      if (fromEnv == null || fromEnv.isBlank()) {
        throw new CommandLine.ParameterException(
            spec.commandLine(),
            "no nodes: give --nodes URI,URI,..., or --config FILE with redlock.nodes, or set"
                + " REDLOCK_NODES");
      }
      properties.setProperty("redlock.nodes", fromEnv);
    }
    try {
      return RedlockConfig.fromProperties(properties);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  /**
   * The index of node {@code given} in {@code list}: a URI in it (same host and port) or a position
   * counted from 1; else a usage error naming {@code flag}.
   *
   * @throws CommandLine.ParameterException if there is no such node
   */
  static int position(
      CommandLine.Model.CommandSpec spec, String flag, String given, List<String> list) {
    String wanted = given.trim();
    if (wanted.matches("\\d+")) {
      int position;
      try {
        position = Integer.parseInt(wanted);
      } catch (NumberFormatException e) {
        position = 0;
      }
      if (position < 1 || position > list.size()) {
        throw new CommandLine.ParameterException(
            spec.commandLine(),
            flag
                + " "
                + wanted
                + ": no such position; there are "
                + list.size()
                + " node(s), counted from 1: "
                + list);
      }
      return position - 1;
    }
    String address;
    try {
      address = address(wanted);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), flag + " " + wanted + ": " + e.getMessage());
    }
    for (int i = 0; i < list.size(); i++) {
      if (address(list.get(i)).equals(address)) { // one server: same host and port
        return i;
      }
    }
    throw new CommandLine.ParameterException(
        spec.commandLine(),
        flag + " " + wanted + " is not one of the nodes " + list + " (give its URI or position)");
  }

  /** {@code host:port} of a node URI, read as the configuration reads it (credentials dropped). */
  static String address(String uri) {
    URI canonical = URI.create(RedlockConfig.builder().node(uri).build().nodes().get(0));
    return canonical.getHost() + ":" + canonical.getPort(); // an IPv6 host keeps its brackets
  }
}
