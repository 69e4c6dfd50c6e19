package dev.redlock.shedlock;

import dev.redlock.Lease;

/**
 * One lease won by {@link RedlockLockProvider#lock}, across the locks its extends make: every
 * {@link RedlockSimpleLock} of it shares the lease, and {@link #current} is the one usable now.
 * What {@link CurrentLock} keeps per thread.
 */
final class Acquisition {
  final String name;
  final Lease lease;
  final DelayedReleases releases;

  /** The lock of this lease that may be used now; null once it is unlocked or not extended. */
  private volatile RedlockSimpleLock current;

  Acquisition(String name, Lease lease, DelayedReleases releases) {
    this.name = name;
    this.lease = lease;
    this.releases = releases;
  }

  RedlockSimpleLock current() {
    return current;
  }

  /** {@code lock} replaces the previous lock of this lease; null ends it. */
  void moveTo(RedlockSimpleLock lock) {
    current = lock;
    if (lock == null) {
      CurrentLock.left(this);
      releases.ended(this);
    }
  }
}
