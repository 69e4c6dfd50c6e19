package dev.redlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.TlsFiles;
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
    return runWith("", args);
  }

  /** The launcher with {@code javaOptions} in {@code REDLOCK_JAVA_OPTS}. */
  private static String[] runWith(String javaOptions, String... args) throws Exception {
    List<String> command = new java.util.ArrayList<>(List.of("sh", SCRIPT.toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("REDLOCK_JAR", JAR.toString());
    builder.environment().put("REDLOCK_JAVA_OPTS", javaOptions);
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

  /**
   * {@code status} and {@code doctor} over {@code rediss://} as an operator runs them (issue 16,
   * item 4): the JVM trusts the nodes' CA through {@code javax.net.ssl.trustStore}; without it the
   * doctor says it cannot reach the nodes.
   */
  @Test
  void statusAndDoctorWorkOverTls() throws Exception {
    try (RedisNodes nodes = redis.start(RedisFixture.nodes(3).tls())) {
      TlsFiles tls = nodes.tls().orElseThrow();
      String trust =
          "-Djavax.net.ssl.trustStore="
              + tls.trustStore()
              + " -Djavax.net.ssl.trustStorePassword="
              + TlsFiles.TRUST_STORE_PASSWORD
              + " -Djavax.net.ssl.trustStoreType=PKCS12";
      String uris = String.join(",", nodes.uris());
      assertTrue(uris.startsWith("rediss://"), uris);
      String[] status = runWith(trust, "status", "--nodes", uris, "launcher:tls");
      assertEquals("0", status[0], status[1]);
      assertTrue(status[1].contains("launcher:tls: "), status[1]);
      String[] doctor = runWith(trust, "doctor", "--nodes", uris);
      assertEquals("0", doctor[0], doctor[1]);
      for (String uri : nodes.uris()) {
        assertTrue(doctor[1].contains("ok    " + uri + "  reachable: round trip"), doctor[1]);
      }
      assertTrue(doctor[1].contains("doctor: no check failed"), doctor[1]);
      String[] untrusted = runWith("", "doctor", "--nodes", uris);
      assertEquals("1", untrusted[0], untrusted[1]);
      for (String uri : nodes.uris()) {
        assertTrue(
            untrusted[1].contains(
                "FAIL  " + uri + "  reachable: javax.net.ssl.SSLHandshakeException"),
            untrusted[1]);
      }
      assertTrue(untrusted[1].contains("fix: trust the node's certificate"), untrusted[1]);
      assertFalse(untrusted[1].contains("doctor: no check failed"), untrusted[1]);
    }
  }
}
