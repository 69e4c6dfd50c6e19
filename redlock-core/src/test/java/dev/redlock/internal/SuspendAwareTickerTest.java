package dev.redlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The lease clock's arithmetic on injected clocks: a monotonic clock that stands still while the
 * machine is paused, and a wall clock that goes on and may be stepped.
 */
class SuspendAwareTickerTest {
  private final AtomicLong monotonic = new AtomicLong(5_000_000_000L);
  private final AtomicLong wall = new AtomicLong(1_796_000_000_000_000_000L);
  private final Ticker ticker = new Ticker.SuspendAware(monotonic::get, wall::get);

  /** Both clocks move on together, as on a machine that is never paused. */
  private void run(Duration d) {
    monotonic.addAndGet(d.toNanos());
    wall.addAndGet(d.toNanos());
  }

  private static long nanos(Duration d) {
    return d.toNanos();
  }

  @Test
  void onAMachineNeverPausedItIsTheMonotonicClock() {
    long start = ticker.read();
    run(Duration.ofSeconds(3));
    assertEquals(nanos(Duration.ofSeconds(3)), ticker.read() - start);
    // The wall clock's millisecond grain and the gap between the two reads are not jumps.
    wall.addAndGet(nanos(Duration.ofMillis(1)));
    monotonic.addAndGet(nanos(Duration.ofMillis(1)) - 900_000);
    assertEquals(nanos(Duration.ofSeconds(3)) + 100_000, ticker.read() - start);
  }

  /** Planted (the monotonic clock alone): a 10 s pause counts as nothing. */
  @Test
  void aPauseCountsInFull() {
    long start = ticker.read();
    run(Duration.ofSeconds(1));
    wall.addAndGet(nanos(Duration.ofSeconds(10))); // suspended: the monotonic clock stood still
    run(Duration.ofSeconds(1));
    assertEquals(nanos(Duration.ofSeconds(12)), ticker.read() - start);
  }

  @Test
  void aWallClockSteppedBackNeitherTurnsItBackNorStopsIt() {
    long start = ticker.read();
    wall.addAndGet(-nanos(Duration.ofSeconds(30)));
    long afterStep = ticker.read();
    assertEquals(start, afterStep);
    run(Duration.ofSeconds(2));
    assertEquals(nanos(Duration.ofSeconds(2)), ticker.read() - start, "runs on, no double count");
  }

  @Test
  void aStepBackThenForwardCountsTheForwardStepSoLeasesEndEarlyNeverLate() {
    long start = ticker.read();
    wall.addAndGet(-nanos(Duration.ofSeconds(5)));
    ticker.read();
    wall.addAndGet(nanos(Duration.ofSeconds(5)));
    run(Duration.ofSeconds(1));
    assertEquals(nanos(Duration.ofSeconds(6)), ticker.read() - start);
  }

  @Test
  void neverGoesBackWhateverTheWallClockDoes() {
    long last = ticker.read();
    java.util.Random random = new java.util.Random(7);
    for (int i = 0; i < 10_000; i++) {
      monotonic.addAndGet(random.nextInt(1_000_000));
      wall.addAndGet(random.nextInt(40_000_000) - 20_000_000L);
      long now = ticker.read();
      assertTrue(now - last >= 0, "step " + i);
      last = now;
    }
  }
}
