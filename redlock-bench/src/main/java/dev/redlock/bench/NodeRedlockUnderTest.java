package dev.redlock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Node.js peer: node-redlock 5.0.0-beta.2 over ioredis, one client per node, in a process of
 * its own ({@code node-redlock-bench.js}) that the driver keeps for the run. It times its own
 * cycles, so the pipe between the two processes is not part of its figures; the driver asks it for
 * a batch at a time, interleaved with the Java rows' batches, then for the same number of cycles in
 * one batch, a steady loop of its own (the "own loop" row). Only with {@code --node-redlock DIR},
 * DIR holding {@code node_modules} with {@code redlock@5.0.0-beta.2} and {@code ioredis@5}.
 */
final class NodeRedlockUnderTest implements LockUnderTest {
  private final Process process;
  private final BufferedReader replies;
  private final Writer requests;

  NodeRedlockUnderTest(Path modules, List<String> uris) throws IOException {
    Path script = Files.createTempFile("node-redlock-bench", ".js");
    try (InputStream in =
        NodeRedlockUnderTest.class.getResourceAsStream("/node-redlock-bench.js")) {
      if (in == null) {
        throw new IllegalStateException("node-redlock-bench.js is not in the bench's jar");
      }
      Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
    }
    script.toFile().deleteOnExit();
    String ports =
        String.join(",", uris.stream().map(u -> u.substring(u.lastIndexOf(':') + 1)).toList());
    process =
        new ProcessBuilder("node", script.toString(), modules.toString(), ports)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    replies =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    requests = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    String ready = replies.readLine();
    if (!"ready".equals(ready)) {
      close();
      throw new IllegalStateException("node-redlock-bench.js did not start: " + ready);
    }
  }

  @Override
  public String name() {
    return "node-redlock 5.0.0-beta.2 (Node " + NodeVersion.VALUE + ", ioredis)";
  }

  @Override
  public void cycle(String key) {
    batch(key, 1);
  }

  /** Runs {@code cycles} acquire + release of {@code key} there; each cycle's nanoseconds. */
  long[] batch(String key, int cycles) {
    try {
      requests.write(key + " " + cycles + "\n");
      requests.flush();
      String line = replies.readLine();
      if (line == null) {
        throw new IllegalStateException("node-redlock-bench.js ended");
      }
      String[] parts = line.split(" ");
      long[] nanos = new long[parts.length];
      for (int i = 0; i < parts.length; i++) {
        nanos[i] = Long.parseLong(parts[i]);
      }
      return nanos;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    try {
      requests.close();
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (IOException e) {
      process.destroyForcibly();
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  /** The version {@code node --version} prints, read once. */
  private static final class NodeVersion {
    static final String VALUE = read();

    private static String read() {
      try {
        Process p = new ProcessBuilder("node", "--version").start();
        String v = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        p.waitFor(5, TimeUnit.SECONDS);
        return v.startsWith("v") ? v.substring(1) : v;
      } catch (IOException e) {
        return "?";
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "?";
      }
    }
  }
}
