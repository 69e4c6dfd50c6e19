package dev.redlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Finds a {@code redis-server} binary: {@code $REDIS_SERVER}, then {@code PATH}, then the Redis 6.2
 * binary that {@code com.github.codemonstur:embedded-redis} ships (Linux x86-64 only).
 *
 * <p>A binary can be given a clock that runs at another rate ({@link #withClockRate(double)}), for
 * clock-fault nodes: it then starts under libfaketime.
 *
 * @param path the executable
 * @param version the version it reports, like {@code 7.0.15}
 * @param clockRate how fast the node's clock runs: 1 is real time, 2 twice as fast (its keys expire
 *     in half the real time)
 */
public record RedisBinary(Path path, String version, double clockRate) {
  /** A binary running on real time. */
  public RedisBinary(Path path, String version) {
    this(path, version, 1.0);
  }

  public RedisBinary {
    if (!(clockRate > 0) || Double.isInfinite(clockRate)) {
      throw new IllegalArgumentException("clockRate must be > 0, was " + clockRate);
    }
  }

  /**
   * A node binary whose clock runs {@code rate} times as fast as real time (0.5: half as fast), for
   * clock faults. Its wall clock and the clock that expires keys both run at that rate.
   *
   * <p>This is the Redis 6.2 binary from embedded-redis: Debian's {@code redis-server} hangs at
   * start under libfaketime (its shared jemalloc clashes with it). Needs libfaketime (Debian:
   * {@code apt-get install faketime}); the node fails to start with a {@link MissingToolException}
   * without it.
   *
   * @throws MissingToolException if the embedded binary does not run on this platform
   */
  public static RedisBinary withFastClock(double rate) {
    return embedded().withClockRate(rate);
  }

  /** This binary with its clock running at {@code rate} (see {@link #withFastClock(double)}). */
  public RedisBinary withClockRate(double rate) {
    return new RedisBinary(path, version, rate);
  }

  private static final Map<Path, Boolean> ACCEPTS_FAKE_CLOCK = new ConcurrentHashMap<>();

  /**
   * Whether libfaketime can be preloaded into this binary, as clock faults need ({@link
   * #withClockRate(double)}, {@link RedisNode#restart(Persistence, Duration)} with an offset).
   * Probed once per binary by running {@code --version} under libfaketime for at most 3 s: the
   * Redis 6.2 binary of embedded-redis accepts it; Debian's {@code redis-server} 7.0 hangs at start
   * (its shared jemalloc calls {@code clock_gettime} while libfaketime initialises, and libfaketime
   * cannot recover).
   *
   * @throws MissingToolException if libfaketime is not installed
   */
  public boolean acceptsFakeClock() {
    Path lib = FakeClock.library();
    return ACCEPTS_FAKE_CLOCK.computeIfAbsent(path, p -> probeFakeClock(p, lib));
  }

  private static boolean probeFakeClock(Path binary, Path lib) {
    try {
      ProcessBuilder builder =
          new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true);
      builder.environment().put("LD_PRELOAD", lib.toString());
      builder.environment().put("FAKETIME", "-1");
      Process p = builder.start();
      Processes.register(p);
      try {
        if (!p.waitFor(3, TimeUnit.SECONDS)) {
          return false;
        }
        String out =
            new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        return p.exitValue() == 0 && out.contains("v=") && !out.contains(FakeClock.CLASH);
      } finally {
        p.destroyForcibly(); // the probe's own process, by its handle
        p.waitFor(10, TimeUnit.SECONDS);
        Processes.unregister(p);
      }
    } catch (IOException e) {
      throw new MissingToolException("cannot run " + binary + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while probing " + binary, e);
    }
  }

  private static final String EMBEDDED_RESOURCE = "/redis-server-6.2.6-v5-linux-amd64";
  private static volatile RedisBinary embedded;

  /**
   * The binary to use by default.
   *
   * @throws MissingToolException if none is found
   */
  public static RedisBinary locate() {
    String explicit = System.getenv("REDIS_SERVER");
    if (explicit != null && !explicit.isBlank()) {
      Path p = Path.of(explicit);
      if (!Files.isExecutable(p)) {
        throw new MissingToolException("REDIS_SERVER=" + explicit + " is not an executable file");
      }
      return of(p);
    }
    String pathVar = System.getenv().getOrDefault("PATH", "");
    for (String dir : pathVar.split(java.io.File.pathSeparator)) {
      if (dir.isEmpty()) {
        continue;
      }
      Path candidate = Path.of(dir, "redis-server");
      if (Files.isExecutable(candidate)) {
        return of(candidate);
      }
    }
    return embedded();
  }

  /**
   * The Redis 6.2 binary shipped inside embedded-redis, extracted once per JVM.
   *
   * @throws MissingToolException if this platform has none
   */
  public static synchronized RedisBinary embedded() {
    if (embedded != null) {
      return embedded;
    }
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
      throw new MissingToolException(
          "no redis-server found: install one (Debian: apt-get install redis-server) or set REDIS_SERVER");
    }
    try (InputStream in = RedisBinary.class.getResourceAsStream(EMBEDDED_RESOURCE)) {
      if (in == null) {
        throw new MissingToolException(
            "no redis-server on PATH and embedded-redis is not on the class path: apt-get install redis-server");
      }
      Path dir = Files.createTempDirectory("redlock-redis-bin");
      Path file = dir.resolve("redis-server-6.2");
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      if (!file.toFile().setExecutable(true)) {
        throw new MissingToolException("cannot make " + file + " executable");
      }
      file.toFile().deleteOnExit();
      dir.toFile().deleteOnExit();
      embedded = of(file);
      return embedded;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot extract the embedded redis-server", e);
    }
  }

  private static RedisBinary of(Path path) {
    try {
      Process p =
          new ProcessBuilder(path.toString(), "--version").redirectErrorStream(true).start();
      String out =
          new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new MissingToolException(path + " --version did not answer in 10s");
      }
      int v = out.indexOf("v=");
      String version = v < 0 ? "unknown" : out.substring(v + 2).split("\\s")[0];
      return new RedisBinary(path, version);
    } catch (IOException e) {
      throw new MissingToolException("cannot run " + path + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while probing " + path, e);
    }
  }
}
