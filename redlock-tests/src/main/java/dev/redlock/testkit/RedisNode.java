package dev.redlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One real {@code redis-server} process on 127.0.0.1, in its own temporary directory, with the
 * faults a lock must survive: kill (SIGKILL), pause (SIGSTOP) and resume (SIGCONT), restart on the
 * same port with or without persistence. It only ever signals the process it started, by PID.
 *
 * <p>Not thread-safe: one test drives one node's faults.
 */
public final class RedisNode implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(15);

  private final RedisBinary binary;
  private final int port;
  private final Path dir;
  private Persistence persistence;
  private Process process;
  private boolean paused;

  private RedisNode(RedisBinary binary, int port, Path dir, Persistence persistence) {
    this.binary = binary;
    this.port = port;
    this.dir = dir;
    this.persistence = persistence;
  }

  /**
   * Starts a node on a free port and waits until it answers PING.
   *
   * @throws MissingToolException if the binary cannot be run
   */
  static RedisNode start(RedisBinary binary, Persistence persistence) {
    IllegalStateException last = null;
    for (int tries = 0; tries < 5; tries++) {
      int port = FreePorts.next();
      Path dir;
      try {
        dir = Files.createTempDirectory(dataRoot(), "redlock-node-" + port + "-");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      RedisNode node = new RedisNode(binary, port, dir, persistence);
      try {
        node.launch();
        return node;
      } catch (IllegalStateException e) { // port taken between probe and bind: try another
        last = e;
        node.close();
      }
    }
    throw last;
  }

  /**
   * Where nodes keep their data: {@code $REDLOCK_NODE_DIR}, else {@code /dev/shm} when it is a
   * writable directory, else the system temp directory. A tmpfs keeps {@code appendfsync always}
   * honest for what these tests do — kill the process, never the machine: the data survives the
   * kill, as the page cache would — without making every write wait for an fsync on a shared disk,
   * which would measure the disk rather than the lock.
   */
  private static Path dataRoot() {
    String explicit = System.getenv("REDLOCK_NODE_DIR");
    if (explicit != null && !explicit.isBlank()) {
      return Path.of(explicit);
    }
    Path shm = Path.of("/dev/shm");
    if (Files.isDirectory(shm) && Files.isWritable(shm)) {
      return shm;
    }
    return Path.of(System.getProperty("java.io.tmpdir"));
  }

  private void launch() {
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
                "--save",
                "",
                "--logfile",
                ""));
    switch (persistence) {
      case AOF -> command.addAll(List.of("--appendonly", "yes", "--appendfsync", "always"));
      case NONE -> command.addAll(List.of("--appendonly", "no"));
    }
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis.log").toFile()));
    if (binary.clockRate() != 1.0) {
      FakeClock.apply(builder.environment(), binary.clockRate());
    }
    try {
      process = builder.start();
    } catch (IOException e) {
      throw new MissingToolException("cannot start " + binary.path() + ": " + e.getMessage(), e);
    }
    Processes.register(process);
    paused = false;
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (!answersPing()) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "redis-server on port " + port + " exited at start: " + logTail());
      }
      if (System.nanoTime() > deadline) {
        stopProcess();
        throw new IllegalStateException(
            "redis-server on port " + port + " did not answer PING in " + START_TIMEOUT);
      }
      pauseBriefly();
    }
  }

  /** Whether the node answers PING now (a paused node does not). */
  public boolean answersPing() {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
      socket.setSoTimeout(200);
      OutputStream out = socket.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] reply = new byte[7];
      int n = in.readNBytes(reply, 0, 7);
      return n == 7 && new String(reply, StandardCharsets.US_ASCII).startsWith("+PONG");
    } catch (IOException e) {
      return false;
    }
  }

  /** The node's URI: {@code redis://127.0.0.1:PORT}. */
  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** The process id, or -1 when not running. */
  public long pid() {
    return process != null && process.isAlive() ? process.pid() : -1;
  }

  public boolean isRunning() {
    return process != null && process.isAlive();
  }

  public boolean isPaused() {
    return paused;
  }

  public RedisBinary binary() {
    return binary;
  }

  /** Kills the process with SIGKILL: no shutdown, no final save. Waits until it is gone. */
  public void kill() {
    stopProcess();
  }

  /** Freezes the process with SIGSTOP: connections stay open, nothing is answered. */
  public void pause() {
    signal("STOP");
    paused = true;
  }

  /** Thaws a paused process with SIGCONT. */
  public void resume() {
    signal("CONT");
    paused = false;
  }

  /**
   * Restarts on the same port, killing the process first if it runs. With {@link Persistence#AOF}
   * the node comes back with its data (when it was started with AOF); with {@link Persistence#NONE}
   * its data directory is wiped, so it comes back empty.
   */
  public void restart(Persistence mode) {
    stopProcess();
    if (mode == Persistence.NONE) {
      wipeData();
    }
    this.persistence = mode;
    launch();
  }

  private void wipeData() {
    try (Stream<Path> files = Files.walk(dir)) {
      files
          .sorted(Comparator.reverseOrder())
          .filter(p -> !p.equals(dir) && !p.getFileName().toString().equals("redis.log"))
          .forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void signal(String name) {
    if (!isRunning()) {
      throw new IllegalStateException("node on port " + port + " is not running");
    }
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

  private void stopProcess() {
    if (process == null) {
      return;
    }
    process.destroyForcibly(); // SIGKILL works on a stopped process too
    if (!waitUninterruptibly(process)) {
      throw new IllegalStateException(
          "redis-server pid " + process.pid() + " did not die after SIGKILL");
    }
    Processes.unregister(process);
    paused = false;
  }

  private String logTail() {
    try {
      List<String> lines = Files.readAllLines(dir.resolve("redis.log"));
      return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  private static void pauseBriefly() {
    try {
      Thread.sleep(10);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for redis-server", e);
    }
  }

  /** Kills the process and removes its directory. Idempotent. */
  @Override
  public void close() {
    stopProcess();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // the directory is in the system temp dir; leaving it is harmless
    }
  }

  @Override
  public String toString() {
    return uri()
        + (isRunning() ? (paused ? " (paused)" : "") : " (down)")
        + " redis "
        + binary.version()
        + (binary.clockRate() == 1.0 ? "" : " clock x" + binary.clockRate());
  }
}
