package dev.redlock.timing;

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

  /** What happens just before the next read of the wall clock: a stall of the reading thread. */
  private Runnable beforeWallRead = () -> {};

  /** What happens just after it, before that read returns: another thread's whole read. */
  private Runnable afterWallRead = () -> {};

  private final Ticker ticker =
      new Ticker.SuspendAware(
          monotonic::get,
          () -> {
            Runnable before = beforeWallRead;
            beforeWallRead = () -> {};
            before.run();
            long value = wall.get();
            Runnable after = afterWallRead;
            afterWallRead = () -> {};
            after.run();
            return value;
          },
          1_000);

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

  /**
   * A thread descheduled between its reads of the two clocks (a stall of 50 ms, twenty times) adds
   * nothing. Planted (one read of each clock, the sample always used): 1 s of stalls reads as 2 s.
   */
  @Test
  void aThreadStalledBetweenItsReadsAddsNothing() {
    long start = ticker.read();
    for (int i = 0; i < 20; i++) {
      beforeWallRead = () -> run(Duration.ofMillis(50)); // both clocks go on while it waits
      ticker.read();
    }
    assertEquals(nanos(Duration.ofSeconds(1)), ticker.read() - start);
  }

  /**
   * A thread whose sample was taken before a suspend, and another that took one after it and moved
   * the state meanwhile: the suspend is added once. Planted (the stale sample compared with the
   * moved state): it reads as a step back, and the next read adds the suspend a second time.
   */
  @Test
  void aSampleOlderThanAnotherThreadsMoveIsNotAppliedOnTopOfIt() {
    long start = ticker.read();
    afterWallRead =
        () -> {
          wall.addAndGet(nanos(Duration.ofSeconds(10))); // the suspend, then another thread reads
          ticker.read();
        };
    ticker.read(); // its wall clock value is from before the suspend
    run(Duration.ofSeconds(1));
    assertEquals(nanos(Duration.ofSeconds(11)), ticker.read() - start);
  }

  /**
   * A wall clock that moves in steps of 15.6 ms (as a coarse platform clock does): its steps are
   * not jumps. Planted (a 2 ms threshold whatever the grain): 10 s reads as about 15 s.
   */
  @Test
  void aCoarseWallClockIsNotTakenForJumps() {
    AtomicLong real = new AtomicLong(monotonic.get());
    long grain = 15_600_000;
    Ticker coarse = new Ticker.SuspendAware(real::get, () -> real.get() / grain * grain, grain);
    long start = coarse.read();
    for (int i = 0; i < 10_000; i++) {
      real.addAndGet(nanos(Duration.ofMillis(1)));
      coarse.read();
    }
    assertEquals(nanos(Duration.ofSeconds(10)), coarse.read() - start);
  }

  /** On this machine the wall clock's grain is found, and small. */
  @Test
  void theSystemWallClocksGrainIsMeasured() {
    long grain = Ticker.SuspendAware.wallGrainNanos();
    assertTrue(grain > 0 && grain <= 20_000_000, grain + " ns");
  }
}
