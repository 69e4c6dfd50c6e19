package dev.redlock.testkit;

import dev.redlock.Lease;
import dev.redlock.RedlockException;
import dev.redlock.testkit.History.Outcome;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * What a {@link Workload} thread does with a lease it was granted: its critical section — the
 * guarded writes to the in-memory register that refuses stale tokens (unless fencing is off), the
 * hold, the release — each step recorded in the workload's {@link History}.
 */
final class CriticalSection {
  private final Workload.Builder options;
  private final History history;
  private final Map<String, Long> register = new HashMap<>();

  CriticalSection(Workload.Builder options, History history) {
    this.options = options;
    this.history = history;
  }

  /**
   * The holder's critical section: a guarded write to each resource the lease locks (a permit's own
   * resource, for a {@code permit} of the semaphore, recorded with the permits this workload asked
   * for); returns false when a guarded write was refused.
   */
  boolean hold(String name, Lease lease, boolean permit) {
    if (permit) {
      history.permitGranted(name, Workload.SEMAPHORE, options.permits, lease);
    } else {
      history.granted(name, lease);
    }
    try {
      if (lease.isValid()) {
        history.foundValid(name, lease);
      }
      boolean accepted = true;
      for (String resource : lease.resources()) {
        long token = lease.fencingToken(resource);
        boolean written = write(resource, token);
        history.record(
            name, resource, History.Op.WRITE, written ? Outcome.OK : Outcome.REFUSED, 0, token);
        accepted &= written;
      }
      if (!options.hold.isZero()) {
        LockSupport.parkNanos(options.hold.toNanos()); // the work done under the lock
      }
      return accepted;
    } finally {
      history.released(name, lease);
      try {
        lease.release();
      } catch (RedlockException e) {
        // a release that did not reach a quorum: the nodes' ttl ends it; the history is unchanged
      }
    }
  }

  /**
   * A reader's critical section: looks, holds (as {@link Workload.Builder#hold}), writes nothing.
   */
  void holdRead(String name, Lease lease) {
    history.grantedRead(name, lease);
    try {
      if (lease.isValid()) {
        history.foundValid(name, lease);
      }
      if (!options.hold.isZero()) {
        LockSupport.parkNanos(options.hold.toNanos());
      }
    } finally {
      history.released(name, lease);
      try {
        lease.release();
      } catch (RedlockException e) {
        // as in hold
      }
    }
  }

  private boolean write(String resource, long token) {
    synchronized (register) {
      Long newest = register.get(resource);
      if (options.fencing && newest != null && token < newest) {
        return false;
      }
      register.put(resource, newest == null ? token : Math.max(newest, token));
      return true;
    }
  }
}
