package dev.redlock.internal;

import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * The one source of time for validity and deadlines: nanoseconds that never go back and never run
 * slower than real time. Tests inject a fake one to check the arithmetic.
 */
@FunctionalInterface
public interface Ticker {
  /**
   * The system's clock for leases: the monotonic clock ({@link System#nanoTime}), plus every
   * forward jump of the wall clock against it ({@link SuspendAware}).
   */
  Ticker SYSTEM =
      new SuspendAware(System::nanoTime, SuspendAware::wallNanos, SuspendAware.wallGrainNanos());

  /** Nanoseconds from an arbitrary origin; only differences mean anything. */
  long read();

  /**
   * A monotonic clock that also counts the time it misses. On Linux {@code System.nanoTime} is
   * {@code CLOCK_MONOTONIC}, which stands still while the machine is suspended or hibernates; a
   * lease measured on it alone would look valid for as long as the suspend lasted. The wall clock
   * goes on through it (the kernel sets it from the hardware clock on resume), but can also be
   * stepped back and forth. So this clock runs on the monotonic one and adds every forward jump of
   * the wall clock against it (a suspend, a forward step): a lease can only look shorter than it
   * is, never longer. A backward step of the wall clock is ignored. Only a suspend and a backward
   * step that fall between two reads of this clock cancel out.
   *
   * <p>Each read samples the monotonic clock, the wall clock and the monotonic clock again: a
   * sample whose two monotonic reads lie far apart (the thread was descheduled between them) says
   * little about the wall clock's offset, and is not used to move the state. The state moves by
   * compare-and-set from the state read before the sample, so a sample older than another thread's
   * move is never applied on top of it. No lock; the state changes only on a jump.
   */
  final class SuspendAware implements Ticker {
    /**
     * How far the offset of the two clocks may move between samples before it counts as a jump, on
     * a wall clock of fine grain: above a sample's own uncertainty ({@link #MAX_SAMPLE_NANOS}).
     */
    static final long JUMP_NANOS = 2_000_000;

    /** A sample whose two monotonic reads lie further apart than this is not used. */
    static final long MAX_SAMPLE_NANOS = 500_000;

    private final LongSupplier monotonic;
    private final LongSupplier wall;
    private final long jumpNanos;

    /** The wall clock minus the monotonic one at the last jump, and how much was added so far. */
    private record State(long offset, long added) {}

    private final AtomicReference<State> state;

    /**
     * @param monotonic nanoseconds that never go back, and may stand still while the machine is
     *     suspended
     * @param wall the wall clock in nanoseconds, which goes on through a suspend but may be stepped
     * @param wallGrainNanos the steps the wall clock moves in: a jump must be larger than two of
     *     them, and than {@link #JUMP_NANOS}
     */
    public SuspendAware(LongSupplier monotonic, LongSupplier wall, long wallGrainNanos) {
      this.monotonic = monotonic;
      this.wall = wall;
      this.jumpNanos = Math.max(JUMP_NANOS, 2 * wallGrainNanos);
      long before = monotonic.getAsLong();
      this.state = new AtomicReference<>(new State(wall.getAsLong() - before, 0));
    }

    @Override
    public long read() {
      while (true) {
        State s = state.get();
        long before = monotonic.getAsLong();
        long offset = wall.getAsLong() - before;
        long after = monotonic.getAsLong();
        long jump = offset - s.offset;
        if (after - before > MAX_SAMPLE_NANOS || (jump <= jumpNanos && jump >= -jumpNanos)) {
          return after + state.get().added; // the latest state: added only grows
        }
        // Forward: time the monotonic clock missed, added. Backward: only the new offset kept.
        if (state.compareAndSet(s, new State(offset, s.added + Math.max(0, jump)))) {
          return after + state.get().added;
        }
        // Another thread moved the state after this sample's state was read: sample again.
      }
    }

    /**
     * The smallest step the wall clock was seen to take (within 50 ms): about a microsecond on
     * Linux, up to 16 ms where the platform's clock is coarse.
     */
    public static long wallGrainNanos() {
      long grain = Long.MAX_VALUE;
      long until = System.nanoTime() + 50_000_000;
      long last = wallNanos();
      for (int steps = 0; steps < 5 && System.nanoTime() - until < 0; ) {
        long now = wallNanos();
        if (now != last) {
          grain = Math.min(grain, Math.abs(now - last));
          last = now;
          steps++;
        } else {
          java.util.concurrent.locks.LockSupport.parkNanos(100_000); // a coarse clock: no spin
        }
      }
      return grain == Long.MAX_VALUE ? 20_000_000 : grain;
    }

    /** The wall clock in nanoseconds, to the precision the platform gives. */
    public static long wallNanos() {
      java.time.Instant now = java.time.Instant.now();
      return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
  }
}
