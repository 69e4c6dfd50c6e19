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
  Ticker SYSTEM = new SuspendAware(System::nanoTime, () -> System.currentTimeMillis() * 1_000_000L);

  /** Nanoseconds from an arbitrary origin; only differences mean anything. */
  long read();

  /**
   * A monotonic clock that also counts the time it misses. On Linux {@code System.nanoTime} is
   * {@code CLOCK_MONOTONIC}, which stands still while the machine is suspended or hibernates, or
   * its VM is paused; a lease measured on it alone would look valid for as long as the pause
   * lasted. The wall clock goes on through a pause, but can also be stepped back and forth. So this
   * clock runs on the monotonic one and adds every forward jump of the wall clock against it (a
   * suspend, a forward step): a lease can only look shorter than it is, never longer. A backward
   * step of the wall clock is ignored; a step back and then forward again is counted once, forward
   * (leases then end early). Only a pause and a backward step of the wall clock between two reads
   * of this clock cancel out.
   *
   * <p>Both clocks are read at every call, with no lock; the state changes only on a jump.
   */
  final class SuspendAware implements Ticker {
    /**
     * How far the two clocks may drift apart between reads before it counts as a jump: above the
     * wall clock's millisecond grain and the gap between the two reads.
     */
    static final long JUMP_NANOS = 2_000_000;

    private final LongSupplier monotonic;
    private final LongSupplier wall;

    /** The wall clock minus the monotonic one at the last jump, and how much was added so far. */
    private record State(long offset, long added) {}

    private final AtomicReference<State> state;

    /**
     * @param monotonic nanoseconds that never go back, and may stand still while the machine is
     *     paused
     * @param wall the wall clock in nanoseconds, which goes on through a pause but may be stepped
     */
    public SuspendAware(LongSupplier monotonic, LongSupplier wall) {
      this.monotonic = monotonic;
      this.wall = wall;
      this.state = new AtomicReference<>(new State(wall.getAsLong() - monotonic.getAsLong(), 0));
    }

    @Override
    public long read() {
      long now = monotonic.getAsLong();
      long offset = wall.getAsLong() - now;
      State s = state.get();
      long jump = offset - s.offset;
      if (jump > JUMP_NANOS || jump < -JUMP_NANOS) {
        // Forward: time the monotonic clock missed, added. Backward: only the new offset kept.
        // Another thread may have taken the same jump into account: its state stands.
        state.compareAndSet(s, new State(offset, s.added + Math.max(0, jump)));
        s = state.get();
      }
      return now + s.added;
    }
  }
}
