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
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import redis.clients.jedis.Jedis;

/**
 * One real {@code redis-server} process on 127.0.0.1, in its own temporary directory, with the
 * faults a lock must survive: kill (SIGKILL), pause (SIGSTOP) and resume (SIGCONT), restart on the
 * same port with or without persistence — and the faults that bring a node back with <em>older</em>
 * data or an older clock: a restart from a snapshot taken earlier ({@link #snapshot()}, {@link
 * #restartFrom(Snapshot)}), a backup restored onto it ({@link #restoreBackup(Snapshot)}), an AOF
 * that lost its last writes ({@link #markAof()}, {@link #restartLosingAofTail(AofMark)}), a clock
 * stepped at boot ({@link #restart(Persistence, Duration)}). It only ever signals the process it
 * started, by PID.
 *
 * <pre>{@code
 * Snapshot before = node.snapshot();     // SAVE, dump.rdb copied aside
 * ... grants happen ...
 * node.restartFrom(before);              // SIGKILL, the old dump.rdb back in place, a new process
 * }</pre>
 *
 * <p>Not thread-safe: one test drives one node's faults.
 */
public final class RedisNode implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(15);
  static final String SNAPSHOTS = "snapshots";
  private static final String LOG = "redis.log";

  private final RedisBinary binary;
  private final int port;
  private final TlsFiles tls; // null: plain only
  private final int tlsPort;
  private final Path dir;
  private final Snapshots snapshots = new Snapshots(this);
  private final AofTail aofTail = new AofTail(this);
  private Persistence persistence;
  private Duration clockOffset = Duration.ZERO;
  private Process process;
  private boolean paused;

  private RedisNode(
      RedisBinary binary, int port, TlsFiles tls, int tlsPort, Path dir, Persistence persistence) {
    this.binary = binary;
    this.port = port;
    this.tls = tls;
    this.tlsPort = tlsPort;
    this.dir = dir;
    this.persistence = persistence;
  }

  /**
   * Starts a node on a free port and waits until it answers PING.
   *
   * @throws MissingToolException if the binary cannot be run
   */
  static RedisNode start(RedisBinary binary, Persistence persistence) {
    return start(binary, persistence, null);
  }

  /**
   * Starts a node on a free port, and with {@code tls} also on a TLS port that {@link #uri()} names
   * ({@code rediss://}); the plain port ({@link #port()}) stays for the kit's own commands.
   *
   * @throws MissingToolException if the binary cannot be run
   */
  static RedisNode start(RedisBinary binary, Persistence persistence, TlsFiles tls) {
    IllegalStateException last = null;
    for (int tries = 0; tries < 5; tries++) {
      int port = FreePorts.next();
      int tlsPort = tls == null ? 0 : FreePorts.next();
      Path dir;
      try {
        dir = Files.createTempDirectory(dataRoot(), "redlock-node-" + port + "-");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      RedisNode node = new RedisNode(binary, port, tls, tlsPort, dir, persistence);
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
    launch(persistence);
  }

  /** Starts the process with the arguments of {@code mode}, which may differ from the node's. */
  void launch(Persistence mode) {
    List<String> command = ServerProcess.command(binary, port, dir, tls, tlsPort, mode);
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve(LOG).toFile()));
    boolean fakeClock = FakeClock.needed(binary.clockRate(), clockOffset);
    long logStart = dir.resolve(LOG).toFile().length(); // the log is appended across restarts
    if (fakeClock) {
      FakeClock.apply(builder.environment(), binary.clockRate(), clockOffset);
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
            "redis-server on port "
                + port
                + " exited at start: "
                + ServerProcess.logTail(dir.resolve(LOG)));
      }
      if (fakeClock
          && ServerProcess.logSince(dir.resolve(LOG), logStart).contains(FakeClock.CLASH)) {
        stopProcess();
        throw new IllegalStateException(
            "libfaketime cannot be preloaded into "
                + binary.path()
                + " (redis "
                + binary.version()
                + "; Debian's build links a shared jemalloc that clashes with it): start clock-fault"
                + " nodes on RedisBinary.embedded(). Log: "
                + ServerProcess.logTail(dir.resolve(LOG)));
      }
      if (System.nanoTime() > deadline) {
        stopProcess();
        throw new IllegalStateException(
            "redis-server on port " + port + " did not answer PING in " + START_TIMEOUT);
      }
      pauseBriefly();
    }
  }

  /** Starts the process with {@code mode}, from now on the node's persistence. */
  void launchAs(Persistence mode) {
    this.persistence = mode;
    launch();
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

  /**
   * The node's URI for clients: {@code redis://127.0.0.1:PORT}, or {@code
   * rediss://127.0.0.1:TLS_PORT} for a node that serves TLS.
   */
  public String uri() {
    return tls != null ? "rediss://127.0.0.1:" + tlsPort : "redis://127.0.0.1:" + port;
  }

  /** The port the node listens on, on 127.0.0.1; the same across restarts. */
  public int port() {
    return port;
  }

  /** The node's data directory (its {@code dump.rdb}, AOF and {@code redis.log}). */
  public Path dir() {
    return dir;
  }

  /** How the node keeps its data now: the mode of its last start. */
  public Persistence persistence() {
    return persistence;
  }

  /**
   * How far the node's wall clock was set from real time when its process started: zero unless
   * {@link #restart(Persistence, Duration)} stepped it. Later restarts keep it (it is the machine's
   * clock, not the process's).
   */
  public Duration clockOffset() {
    return clockOffset;
  }

  /** The process id, or -1 when not running. */
  public long pid() {
    return process != null && process.isAlive() ? process.pid() : -1;
  }

  /** Whether the process is alive (a paused process is). */
  public boolean isRunning() {
    return process != null && process.isAlive();
  }

  /** Whether the process was paused by {@link #pause()} and not resumed since. */
  public boolean isPaused() {
    return paused;
  }

  /** The binary the node runs. */
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
   * Restarts on the same port, killing the process first if it runs, keeping the node's clock
   * offset. The new process loads what {@code mode} finds in the data directory: with {@link
   * Persistence#AOF} or {@link Persistence#AOF_EVERYSEC} the node comes back with its data (when it
   * was started with an AOF), with {@link Persistence#RDB} with the data of its last {@code
   * dump.rdb} ({@link #snapshot()}), or empty if none; with {@link Persistence#NONE} its data
   * directory is wiped, so it comes back empty.
   */
  public void restart(Persistence mode) {
    restart(mode, clockOffset);
  }

  /**
   * Restarts like {@link #restart(Persistence)}, with the node's wall clock set {@code clockOffset}
   * away from real time from its first instruction on ({@code ofSeconds(-30)}: 30 s behind), as a
   * clock stepped at boot (a VM restored, NTP stepping after a bad RTC) would be; it then advances
   * at the binary's rate. {@code TIME}, key expiry and everything Redis derives from the wall clock
   * follow it; its monotonic clock does not move. libfaketime is preloaded into the process itself,
   * so {@link #pid()} stays the node's own. {@link Duration#ZERO} puts the clock back on real time
   * (without libfaketime, unless the binary has a clock rate).
   *
   * <p>Needs a binary that accepts libfaketime ({@link RedisBinary#acceptsFakeClock()}): the Redis
   * 6.2 binary of {@link RedisBinary#embedded()} does, Debian's {@code redis-server} 7.0 does not.
   *
   * @throws IllegalArgumentException if {@code clockOffset} is null
   * @throws IllegalStateException if the process does not start (on a binary that clashes with
   *     libfaketime, with a message saying so)
   * @throws MissingToolException if libfaketime is not installed
   */
  public void restart(Persistence mode, Duration clockOffset) {
    if (mode == null) {
      throw new IllegalArgumentException("mode must not be null");
    }
    if (clockOffset == null) {
      throw new IllegalArgumentException("clockOffset must not be null");
    }
    stopProcess();
    if (mode == Persistence.NONE) {
      wipeData();
    }
    Duration previous = this.clockOffset;
    this.persistence = mode;
    this.clockOffset = clockOffset;
    try {
      launch();
    } catch (RuntimeException e) {
      this.clockOffset = previous; // the node stays down; a plain restart uses the old clock
      throw e;
    }
  }

  /**
   * Stalls the server for {@code duration}, as a long command or a stalled disk would, while its
   * process keeps running: {@code DEBUG SLEEP} sent on a connection of its own, so the server may
   * have read a client's request just before and answer it only after, when the client has given
   * up. Returns at once; the stall ends by itself.
   *
   * @throws IllegalArgumentException if {@code duration} is null, not positive, or over 10 s
   */
  public void stall(Duration duration) {
    if (duration == null
        || duration.isNegative()
        || duration.isZero()
        || duration.toSeconds() > 10) {
      throw new IllegalArgumentException("duration must be > 0 and <= 10 s, was " + duration);
    }
    requireAnswering("stall");
    Jedis jedis = new Jedis("127.0.0.1", port, (int) duration.toMillis() + 10_000);
    Thread sleeper =
        new Thread(
            () -> {
              try (jedis) {
                jedis.sendCommand(
                    () -> redis.clients.jedis.util.SafeEncoder.encode("DEBUG"),
                    "SLEEP",
                    String.format(java.util.Locale.ROOT, "%.3f", duration.toMillis() / 1000.0));
              } catch (RuntimeException e) {
                // killed or restarted meanwhile: the stall is over either way
              }
            },
            "redis-stall-" + port);
    sleeper.setDaemon(true);
    sleeper.start();
  }

  /**
   * Takes a snapshot of the node's whole dataset: {@code SAVE} (the node writes {@code dump.rdb}
   * and answers nothing else meanwhile, as under a backup job's SAVE), then copies the file aside,
   * where no restart or wipe of this node touches it. Works in every {@link Persistence} mode; on
   * an {@link Persistence#RDB} node it also is the {@code dump.rdb} a plain restart loads.
   *
   * @throws IllegalStateException if the node is not running or is paused
   */
  public Snapshot snapshot() {
    return snapshots.take();
  }

  /**
   * Restarts this node from a snapshot it took earlier, losing every write since: SIGKILL, the data
   * directory wiped, the snapshot put in place as {@code dump.rdb}, a new process (a new {@code
   * run_id}) started with {@code appendonly no} so that it loads it. An {@link Persistence#AOF} or
   * {@link Persistence#AOF_EVERYSEC} node is then switched back to its AOF at run time ({@code
   * CONFIG SET appendonly yes}, which writes a new AOF from the loaded data — what an operator does
   * to bring such a node back from an RDB), and this waits until that AOF is written. The clock
   * offset is kept.
   *
   * @throws IllegalArgumentException if {@code snapshot} was taken on another node (that is {@link
   *     #restoreBackup(Snapshot)})
   * @throws IllegalStateException if the node does not start from it
   */
  public void restartFrom(Snapshot snapshot) {
    snapshots.restartFrom(snapshot);
  }

  /**
   * Restores a backup onto this node, as an operator does: the node is stopped (SIGKILL), its data
   * directory wiped, the backup put in place as {@code dump.rdb} and a new process started that
   * loads it, then switched back to the node's AOF if it had one (as in {@link
   * #restartFrom(Snapshot)}). The backup may come from this node earlier or from another node (the
   * node then holds that node's keys, life marker included). An RDB loads only on the same major
   * version of Redis or a newer one: a 7.x snapshot does not load on the 6.2 binary.
   *
   * @throws IllegalArgumentException if the snapshot comes from a newer major version of Redis
   * @throws IllegalStateException if the node does not start from it
   */
  public void restoreBackup(Snapshot backup) {
    snapshots.restoreBackup(backup);
  }

  /**
   * Marks where the AOF that receives new writes ends now, so that {@link
   * #restartLosingAofTail(AofMark)} can lose every write after it. Every write this node
   * acknowledged before the call is within the mark: Redis writes the AOF before it replies.
   *
   * @throws IllegalStateException if the node is not an {@link Persistence#AOF_EVERYSEC} node (with
   *     {@code appendfsync always} no acknowledged write can be lost), is not running, or has no
   *     AOF file
   */
  public AofMark markAof() {
    return aofTail.mark();
  }

  /**
   * Restarts this node as after a crash of its machine that lost the AOF's last writes: SIGKILL,
   * the AOF cut back to {@code mark}, and a new process started with {@link
   * Persistence#AOF_EVERYSEC} that loads what is left ({@code aof-load-truncated} is on by
   * default). Every write acknowledged after the mark is gone; every one before it is kept.
   *
   * @throws IllegalArgumentException if the mark is of another node
   * @throws IllegalStateException if the file was replaced (an AOF rewrite) or cut since the mark,
   *     or the node does not start from what is left
   */
  public void restartLosingAofTail(AofMark mark) {
    aofTail.restartLosingTail(mark);
  }

  void requireAnswering(String what) {
    if (!isRunning() || paused) {
      throw new IllegalStateException(
          "cannot " + what + ": node " + uri() + " is " + (paused ? "paused" : "not running"));
    }
  }

  Jedis jedis() {
    return new Jedis("127.0.0.1", port, 10_000);
  }

  void wipeData() {
    try (Stream<Path> files = Files.walk(dir)) {
      files
          .sorted(Comparator.reverseOrder())
          .filter(p -> !p.equals(dir) && !p.getFileName().toString().equals(LOG))
          .filter(p -> !p.startsWith(dir.resolve(SNAPSHOTS)))
          .forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void signal(String name) {
    if (!isRunning()) {
      throw new IllegalStateException("node on port " + port + " is not running");
    }
    ServerProcess.signal(process, name);
  }

  void stopProcess() {
    if (process == null) {
      return;
    }
    ServerProcess.kill(process);
    paused = false;
  }

  static void pauseBriefly() {
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
        + (binary.clockRate() == 1.0 ? "" : " clock x" + binary.clockRate())
        + (clockOffset.isZero() ? "" : " clock " + clockOffset);
  }
}
