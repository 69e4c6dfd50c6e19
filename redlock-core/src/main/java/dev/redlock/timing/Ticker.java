package dev.redlock.timing;

import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

/**
 * The one source of time for validity and deadlines: nanoseconds that never go back and never run
 * slower than real time. Tests inject a fake one to check the arithmetic.
 */
@FunctionalInterface
public interface Ticker {
  /** The monotonic clock, plus every forward jump of the wall clock against it. */
  Ticker SYSTEM =
      new SuspendAware(System::nanoTime, SuspendAware::wallNanos, SuspendAware.wallGrainNanos());

  /** Nanoseconds from an arbitrary origin; only differences mean anything. */
  long read();

  /**
   * A monotonic clock that also counts the time it misses: {@code System.nanoTime} stands still
   * while the machine is suspended, and a lease measured on it alone would look valid throughout.
   * So this clock adds every forward jump of the wall clock against the monotonic one (a suspend, a
   * forward step); a backward step is ignored. A lease can only look shorter than it is.
   *
   * <p>Each read samples monotonic, wall, monotonic; a sample whose monotonic reads lie far apart
   * is not used to move the state, which moves by compare-and-set from the state read before it.
   */
  final class SuspendAware implements Ticker {
    /** How far the clocks' offset may move before it counts as a jump, on a fine wall clock. */
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

    /** The smallest step the wall clock was seen to take within 50 ms. */
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
          LockSupport.parkNanos(100_000); // a coarse clock: no spin
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
