package dev.redlock.examples;

import dev.redlock.testkit.RedisFixture;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * What an example returned and what it printed, from a run with its output captured.
 *
 * @param result what the example's run returned
 * @param output everything it printed
 */
record ExampleRun<T>(T result, String output) {
  /** One run of an example that prints to {@code out}. */
  interface Example<T> {
    T run(PrintStream out) throws Exception;
  }

  /** Runs {@code example} with its output captured. */
  static <T> ExampleRun<T> of(Example<T> example) throws Exception {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    T result = example.run(new PrintStream(buffer, true, StandardCharsets.UTF_8));
    return new ExampleRun<>(result, buffer.toString(StandardCharsets.UTF_8));
  }

  /**
   * Runs {@code example}, which starts redis-server nodes of its own, with its output captured:
   * skipped (failed under {@code CI=true}) where no redis-server runs.
   */
  static <T> ExampleRun<T> onItsOwnNodes(Example<T> example) throws Exception {
    RedisFixture.requireRedisServer();
    return of(example);
  }
}
