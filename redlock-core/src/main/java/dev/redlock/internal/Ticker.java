package dev.redlock.internal;

/**
 * The one source of time for validity and deadlines: a monotonic nanosecond counter. Never the wall
 * clock, which can jump. Tests inject a fake one to check the arithmetic.
 */
@FunctionalInterface
public interface Ticker {
  /** The system's monotonic clock. */
  Ticker SYSTEM = System::nanoTime;

  /** Nanoseconds from an arbitrary origin; only differences mean anything. */
  long read();
}
