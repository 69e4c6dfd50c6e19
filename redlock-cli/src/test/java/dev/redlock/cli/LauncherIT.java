package dev.redlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNodes;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The launcher script and the runnable jar, as an operator runs them (built in `package`). */
class LauncherIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  private static final Path SCRIPT = Path.of("..", "bin", "redlock").toAbsolutePath().normalize();
  private static final Path JAR = Path.of("target", "redlock.jar").toAbsolutePath();

  private static String[] run(String... args) throws Exception {
    List<String> command = new java.util.ArrayList<>(List.of("sh", SCRIPT.toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("REDLOCK_JAR", JAR.toString());
    builder.environment().put("PATH", javaBin() + File.pathSeparator + System.getenv("PATH"));
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the launcher finished");
    return new String[] {Integer.toString(p.exitValue()), out};
  }

  /** The java running these tests, so the script finds one even where PATH has none. */
  private static String javaBin() {
    return Path.of(System.getProperty("java.home"), "bin").toString();
  }

  @Test
  void theScriptRunsTheJar() throws Exception {
    assertTrue(Files.isRegularFile(JAR), JAR + " is built by `package`");
    String[] version = run("--version");
    assertEquals("0", version[0], version[1]);
    assertTrue(version[1].startsWith("redlock "), version[1]);

    try (RedisNodes nodes = redis.start(RedisFixture.nodes(3))) {
      String[] status = run("status", "--nodes", String.join(",", nodes.uris()), "launcher:x");
      assertEquals("0", status[0], status[1]);
      assertTrue(status[1].contains("launcher:x: "), status[1]);
    }
    String[] usage = run("status", "x");
    assertEquals("2", usage[0], usage[1]);
  }
}
