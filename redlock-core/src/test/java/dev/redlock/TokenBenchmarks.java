package dev.redlock;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What each acquisition pays before it reaches a node: a fresh owner token (128 bits of {@code
 * SecureRandom}). Beside the package-private type it measures; how to run it: docs/performance.md
 * ("In-process microbenchmarks").
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class TokenBenchmarks {
  private final LockTokens tokens = new LockTokens();

  /** JMH makes one per thread. */
  public TokenBenchmarks() {}

  @Benchmark
  public String token() {
    return tokens.next();
  }
}
