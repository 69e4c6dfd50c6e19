package dev.redlock.config;

import dev.redlock.Lease;
import dev.redlock.Redlock;

/**
 * Whether {@link Redlock#withLock} interrupts the thread running the task when its lease is lost.
 */
public enum TaskInterruption {
  /**
   * Interrupt the task's thread once, when the lease is lost, so blocking I/O stops (the default).
   * When the task then throws, {@code withLock} clears that interrupt as it rethrows (the exception
   * carries the loss); a task that swallows it and returns normally leaves the flag set.
   */
  ON_LEASE_LOSS,
  /**
   * Never interrupt: the task learns of the loss through {@link Lease#checkValid()} and {@link
   * Lease#onLost}.
   */
  NEVER
}
