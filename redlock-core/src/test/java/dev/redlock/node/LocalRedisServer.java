package dev.redlock.node;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.redlock.script.Script;
import java.io.InputStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * One real {@code redis-server} for core's own tests of the node package (core cannot use the kit,
 * which depends on it): plain, or TLS only with a self-signed certificate for 127.0.0.1 made by
 * {@code openssl}. Vouched for (its life marker stamped), so it votes at once. Stopped by its
 * process handle. A missing {@code redis-server} or {@code openssl} fails under {@code CI=true} and
 * skips on a laptop.
 */
public final class LocalRedisServer implements AutoCloseable {
  public final int port;
  final SSLSocketFactory tls; // null: plain
  private final Process process;
  private final Path dir; // its log, and under TLS its key and certificate

  private LocalRedisServer(int port, SSLSocketFactory tls, Process process, Path dir) {
    this.port = port;
    this.tls = tls;
    this.process = process;
    this.dir = dir;
  }

  public static LocalRedisServer start(boolean tls) throws Exception {
    String redis = required("redis-server");
    Path dir = Files.createTempDirectory("redlock-node-test");
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    List<String> command =
        new ArrayList<>(
            List.of(
                redis,
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                dir.toString()));
    SSLSocketFactory factory = null;
    if (tls) {
      String openssl = required("openssl");
      Process make =
          new ProcessBuilder(
                  openssl,
                  "req",
                  "-x509",
                  "-newkey",
                  "rsa:2048",
                  "-nodes",
                  "-days",
                  "1",
                  "-keyout",
                  "key.pem",
                  "-out",
                  "cert.pem",
                  "-subj",
                  "/CN=127.0.0.1",
                  "-addext",
                  "subjectAltName=IP:127.0.0.1")
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("openssl.log").toFile())
              .start();
      if (!make.waitFor(30, TimeUnit.SECONDS) || make.exitValue() != 0) {
        throw new IllegalStateException(
            "openssl failed: " + Files.readString(dir.resolve("openssl.log")));
      }
      command.addAll(
          List.of(
              "--port",
              "0",
              "--tls-port",
              String.valueOf(port),
              "--tls-cert-file",
              dir.resolve("cert.pem").toString(),
              "--tls-key-file",
              dir.resolve("key.pem").toString(),
              "--tls-auth-clients",
              "no"));
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      try (InputStream in = Files.newInputStream(dir.resolve("cert.pem"))) {
        trust.setCertificateEntry(
            "node", CertificateFactory.getInstance("X.509").generateCertificate(in));
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, tmf.getTrustManagers(), null);
      factory = context.getSocketFactory();
    } else {
      command.addAll(List.of("--port", String.valueOf(port)));
    }
    Process process =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("redis.log").toFile())
            .start();
    LocalRedisServer server = new LocalRedisServer(port, factory, process, dir);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try (Jedis jedis = server.admin()) {
        String runId = null;
        for (String line : jedis.info("server").split("\\r?\\n")) {
          if (line.startsWith("run_id:")) {
            runId = line.substring(7).trim();
          }
        }
        // Vouched for as redlock init-nodes does: it votes at once.
        NodeKeys keys = NodeKeys.of("redlock:", 60_000, true);
        jedis.eval(
            Script.VOUCH_NEW_NODE.source(),
            java.util.List.of(keys.lifeKey(), keys.witnessKey()),
            java.util.List.of("redlock:", runId, "60000", "1", "10", "0"));
        return server;
      } catch (RuntimeException e) {
        if (System.nanoTime() > until || !process.isAlive()) {
          String log = Files.readString(dir.resolve("redis.log")); // before close() removes it
          server.close();
          throw new IllegalStateException("redis-server did not start: " + log, e);
        }
        Thread.sleep(20); // the process is starting: nothing to wait on but its port
      }
    }
  }

  private static String required(String tool) {
    for (String entry : System.getenv().getOrDefault("PATH", "").split(":")) {
      Path candidate = Path.of(entry, tool);
      if (Files.isExecutable(candidate)) {
        return candidate.toString();
      }
    }
    if ("true".equals(System.getenv("CI"))) {
      throw new IllegalStateException(tool + " is not installed: CI needs it");
    }
    assumeTrue(false, "no " + tool + " on PATH");
    return null;
  }

  NodeUri uri() {
    return NodeUri.parse((tls != null ? "rediss" : "redis") + "://127.0.0.1:" + port);
  }

  Jedis admin() {
    DefaultJedisClientConfig.Builder config =
        DefaultJedisClientConfig.builder().timeoutMillis(2000);
    if (tls != null) {
      config.ssl(true).sslSocketFactory(tls);
    }
    return new Jedis(new HostAndPort("127.0.0.1", port), config.build());
  }

  /** Freezes the server (SIGSTOP): it keeps its sockets open and reads nothing. */
  public void freeze() throws Exception {
    signal("-STOP");
  }

  /** Lets a frozen server run again (SIGCONT). */
  public void thaw() throws Exception {
    signal("-CONT");
  }

  private void signal(String signal) throws Exception {
    Process kill =
        new ProcessBuilder(required("kill"), signal, Long.toString(process.pid()))
            .redirectErrorStream(true)
            .start();
    if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
      throw new IllegalStateException("kill " + signal + " " + process.pid() + " failed");
    }
  }

  /**
   * Stops the server by its process handle (PID), also when a test left it frozen (a thaw that
   * failed), and removes its directory.
   */
  @Override
  public void close() {
    try {
      if (process.isAlive()) {
        signal("-CONT"); // a frozen process takes SIGTERM only once running again
      }
    } catch (Exception e) {
      // stopped below regardless
    }
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (java.io.IOException | RuntimeException e) {
      // a temporary directory: left behind at worst
    }
  }

  /**
   * A shared connection to this server over {@code socket} (unconnected: a test's own, to reach
   * into its reads), made and handshaken as a node makes its own; plain sockets only.
   */
  SharedConnection sharedConnection(
      java.net.Socket socket,
      java.util.concurrent.Executor drains,
      NodeKeys keys,
      long nodeTimeoutNanos)
      throws Exception {
    redis.clients.jedis.JedisSocketFactory sockets =
        () -> {
          try {
            socket.connect(new java.net.InetSocketAddress("127.0.0.1", port));
          } catch (java.io.IOException e) {
            throw new redis.clients.jedis.exceptions.JedisConnectionException(e);
          }
          return socket;
        };
    JedisNode.HandshakeConnection handshake =
        new JedisNode.HandshakeConnection(
            sockets, redis.clients.jedis.DefaultJedisClientConfig.builder().build());
    handshake.readLife();
    return new SharedConnection(
        "test",
        handshake,
        socket,
        null,
        handshake.life,
        handshake.life.encodedScriptArgs(keys, 0),
        nodeTimeoutNanos,
        new ScriptCalls(keys),
        drains,
        null);
  }
}
