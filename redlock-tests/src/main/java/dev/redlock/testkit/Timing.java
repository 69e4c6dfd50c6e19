package dev.redlock.testkit;

import java.time.Duration;

/**
 * One number for how slow the machine is, like Apache Curator's {@code Timing}: the waits and
 * bounds of the contract suites (how long "does not hang" may take, how long an Awaitility wait may
 * last, the ttls a test waits out) are written for an ordinary machine and multiplied by {@link
 * #factor()}. A slow or shared machine raises {@code -Dredlock.test.timing=3} instead of editing
 * tests.
 *
 * <p>Only bounds and ttls scale, never what a test asserts about them: a wait still ends as soon as
 * its condition holds, and a bound still fails the test when it is passed.
 *
 * <pre>{@code
 * Timing timing = Timing.get();
 * await().atMost(timing.noHang()).until(() -> ...);
 * Duration ttl = timing.scaled(Duration.ofSeconds(1));
 * }</pre>
 */
public final class Timing {
  /** The system property that holds the factor: a number {@code >= 1}; 1 when absent. */
  public static final String PROPERTY = "redlock.test.timing";

  /** The bound for "returns instead of hanging" at factor 1: far above any correct run. */
  private static final Duration NO_HANG = Duration.ofSeconds(30);

  private static final Timing CURRENT = of(System.getProperty(PROPERTY, "1"));

  private final double factor;

  private Timing(double factor) {
    this.factor = factor;
  }

  /** The timing of this JVM: {@value #PROPERTY}, read once. */
  public static Timing get() {
    return CURRENT;
  }

  /**
   * A timing with {@code factor}, as {@link #PROPERTY} would give it.
   *
   * @throws IllegalArgumentException if it is not a number {@code >= 1}
   */
  public static Timing of(double factor) {
    if (!(factor >= 1) || Double.isInfinite(factor)) {
      throw new IllegalArgumentException(
          PROPERTY + " must be a number >= 1 (how many times slower than usual), was " + factor);
    }
    return new Timing(factor);
  }

  private static Timing of(String text) {
    try {
      return of(Double.parseDouble(text.trim()));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          PROPERTY
              + " must be a number >= 1 (how many times slower than usual), was '"
              + text
              + "'",
          e);
    }
  }

  /** The factor every bound and ttl is multiplied by. */
  public double factor() {
    return factor;
  }

  /**
   * {@code base} times the factor, rounded up to a whole millisecond (a ttl must be one).
   *
   * @throws IllegalArgumentException if {@code base} is negative
   */
  public Duration scaled(Duration base) {
    if (base.isNegative()) {
      throw new IllegalArgumentException("base must be >= 0, was " + base);
    }
    return Duration.ofMillis((long) Math.ceil(base.toNanos() * factor / 1_000_000.0));
  }

  /**
   * The bound for "returns instead of hanging", and for an Awaitility wait on something that must
   * happen: 30 s times the factor, generous on purpose (these bounds are not speed claims).
   */
  public Duration noHang() {
    return scaled(NO_HANG);
  }

  /**
   * Sleeps for {@code duration} whatever interrupts come, as a job that finishes its batch does
   * (half a payout is worse than a late one); the interrupt flag is set again after.
   */
  public static void sleepThroughInterrupts(Duration duration) {
    boolean interrupted = false;
    long until = System.nanoTime() + duration.toNanos();
    while (System.nanoTime() - until < 0) {
      try {
        java.util.concurrent.TimeUnit.NANOSECONDS.sleep(until - System.nanoTime());
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return PROPERTY + "=" + factor;
  }
}
