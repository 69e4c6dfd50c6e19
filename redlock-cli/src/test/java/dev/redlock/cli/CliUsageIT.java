package dev.redlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Usage errors, help and where the nodes come from, for every command. */
class CliUsageIT extends CliITBase {
  @ParameterizedTest
  @ValueSource(strings = {"", "run", "status", "doctor", "release", "quarantine", "init-nodes"})
  void everyCommandHasHelpWithExamples(String command) {
    Result r = command.isEmpty() ? redlock("--help") : redlock(command, "--help");
    assertEquals(0, r.status(), r.toString());
    assertTrue(r.out().contains("Examples:"), r.toString());
  }

  @Test
  void noNodesAnywhereIsAUsageErrorThatSaysWhereNodesComeFrom() {
    Result r = redlock("", Map.of(), "status", "r");
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains("no nodes: give --nodes"), r.toString());
  }

  @Test
  void aBadNodeListIsAUsageErrorNamingTheNode() {
    Result r = redlock("status", "--nodes", "redis://127.0.0.1:notaport", "r");
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains("notaport"), r.toString());
  }

  @Test
  void badFlagsAreUsageErrors() {
    Result none = redlock();
    assertEquals(ExitCodes.USAGE, none.status(), "no subcommand: " + none);
    assertTrue(none.err().startsWith("Usage: redlock "), none.toString());
    assertTrue(none.err().contains("init-nodes"), "the subcommands are listed: " + none);
    Result unknown = redlock("--bogus");
    assertTrue(unknown.err().startsWith("redlock: Unknown option: '--bogus'"), unknown.toString());
    assertEquals(ExitCodes.USAGE, redlock("status", "--bogus", "r").status());
    assertEquals(ExitCodes.USAGE, redlock("run", "--ttl", "5x", "r", "--", "true").status());
    assertEquals(ExitCodes.USAGE, redlock("run", "r").status(), "a command is required");
    Result zero = redlock("run", "--ttl", "0s", "r", "--", "true");
    assertEquals(ExitCodes.USAGE, zero.status(), zero.toString());
    assertTrue(zero.err().contains("ttl"), zero.toString());
  }

  @Test
  void nodesFromAConfigFileAndFromTheFlagOverridingIt() throws Exception {
    Path config = dir.resolve("redlock.properties");
    Files.writeString(config, "redlock.nodes=" + nodeList + "\nredlock.nodeTimeout=200ms\n");
    Result fromFile = redlock("", Map.of(), "status", "--config", config.toString(), "cfg");
    assertEquals(0, fromFile.status(), fromFile.toString());
    assertTrue(fromFile.out().contains("cfg: FREE"), fromFile.toString());

    Files.writeString(config, "redlock.nodes=" + nodeList + "\nredlock.bogus=1\n");
    Result bad = redlock("", Map.of(), "status", "--config", config.toString(), "cfg");
    assertEquals(ExitCodes.USAGE, bad.status(), bad.toString());
    assertTrue(bad.err().contains("redlock.bogus"), bad.toString());

    Result missing =
        redlock("", Map.of(), "status", "--config", dir.resolve("nope").toString(), "x");
    assertEquals(ExitCodes.USAGE, missing.status(), missing.toString());
  }
}
