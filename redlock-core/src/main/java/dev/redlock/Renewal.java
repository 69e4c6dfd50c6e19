package dev.redlock;

import dev.redlock.spi.LeaseStore;
import dev.redlock.spi.Tally;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The renewal of one kept-alive lease, owned by it: when each renewal falls due, sending it to the
 * store, and what its outcome does (schedule the next, retry, or lose the lease), up to maxHold;
 * and an extend asked for by hand ({@link #extend}), whose votes count the same way. Lock order:
 * the lease's monitor may be held while calling {@link #start} or {@link #stop}; this object never
 * calls the lease while holding its own.
 *
 * @param <H> what the store keeps about the lease
 */
final class Renewal<H extends LeaseStore.Held> {
  private static final Logger log = LoggerFactory.getLogger(Renewal.class);
  // Extends log under the engine's name, with the grants (docs/operations.md, "Logs").
  private static final Logger extendLog = LoggerFactory.getLogger(LeaseEngine.class);

  private final ManagedLease<H> lease;
  private final LeaseEngine<H> engine;
  private final long intervalNanos; // from one renewal's start to the next: ttl × renewalFraction
  private final long maxHoldUntil; // when the lease is lost by policy, on the monotonic clock
  private ScheduledFuture<?> next; // guarded by this
  private ScheduledFuture<?> maxHold; // guarded by this; null if maxHold is beyond the clock
  private boolean stopped; // guarded by this

  Renewal(ManagedLease<H> lease, LeaseEngine<H> engine, long intervalNanos, long grantedAt) {
    this.lease = lease;
    this.engine = engine;
    this.intervalNanos = intervalNanos;
    // Saturated: a maxHold of centuries (the config has no upper bound) means none.
    long maxHoldNanos = Arguments.saturatedNanos(engine.settings.maxHold());
    this.maxHoldUntil =
        grantedAt + maxHoldNanos < grantedAt ? Long.MAX_VALUE : grantedAt + maxHoldNanos;
  }

  /** Renews one interval after {@code renewedFrom}, and loses the lease at maxHold. */
  synchronized void start(long renewedFrom) {
    schedule(renewedFrom + intervalNanos);
    if (maxHoldUntil != Long.MAX_VALUE) {
      // Its own timer: a renewal in flight or waiting for a thread must not put maxHold off.
      maxHold =
          engine.watchdog.at(
              maxHoldUntil,
              () ->
                  // A timer held up past the validity too (a pause): expiry is the first cause.
                  lease.loseOnLibraryThread(
                      lease.isValid()
                          ? LeaseLostException.Reason.MAX_HOLD_REACHED
                          : LeaseLostException.Reason.EXPIRED,
                      List.of()));
    }
  }

  /** Stops renewing: the lease was released or lost. Final. */
  synchronized void stop() {
    stopped = true;
    if (next != null) {
      next.cancel(false);
    }
    if (maxHold != null) {
      maxHold.cancel(false);
    }
  }

  private synchronized void schedule(long at) {
    if (!stopped) {
      next = engine.watchdog.at(at, this::due);
    }
  }

  /**
   * A renewal fell due (on a timer thread): sent without a thread waiting where the store can
   * ({@link LeaseStore#renewAsync}), else on a renewal thread.
   */
  private void due() {
    long start = engine.ticker.read();
    if (!stillDue(start)) {
      return;
    }
    LeaseStore<H> store = engine.store;
    if (store.renewAsync(lease.held(), lease.ttlMillis(), votes -> renewed(votes, start))) {
      return;
    }
    engine.watchdog.renewal(
        () -> {
          long now = engine.ticker.read(); // it may have waited in line
          if (stillDue(now)) {
            try {
              renewed(store.renew(lease.held(), lease.ttlMillis()), now);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt(); // closing: the lease is released or expires
            }
          }
        });
  }

  /** Whether a renewal starting at {@code now} is still due; a lease whose time is up is lost. */
  private boolean stillDue(long now) {
    synchronized (this) {
      if (stopped) {
        return false;
      }
    }
    if (!lease.isValid()) {
      lease.loseOnLibraryThread(LeaseLostException.Reason.EXPIRED, List.of());
      return false;
    }
    if (now - maxHoldUntil >= 0) {
      lease.loseOnLibraryThread(LeaseLostException.Reason.MAX_HOLD_REACHED, List.of());
      return false;
    }
    return true;
  }

  /**
   * A renewal's outcome. Extended: the next renewal one interval after this one's start, or after
   * the start of the extend that gave the validity kept, if later (never an older start, which
   * would fall due at once). Not extended: the lease keeps its validity, and the renewal is tried
   * again after the retry pause, no later than the last try that can be decided in time. The lease
   * is lost when no try can be, or when so many nodes refused that none can win.
   */
  private void renewed(Tally votes, long start) {
    if (applyVotes(lease, engine, votes, start, lease.ttlMillis(), true)) {
      long keptFrom = lease.renewedFrom(); // read before taking this monitor (lock order)
      schedule((keptFrom - start > 0 ? keptFrom : start) + intervalNanos);
      return;
    }
    synchronized (this) {
      if (stopped) { // released or lost meanwhile: nothing to retry, nothing to warn of
        return;
      }
    }
    long now = engine.ticker.read();
    long lastTry = lease.validUntil() - engine.roundNanos; // decided before the validity ends
    if (engine.barQuorum(votes, status -> status == NodeOutcome.Status.REFUSED)
        || lastTry - now <= 0) {
      lease.loseOnLibraryThread(LeaseLostException.Reason.RENEWAL_FAILED, votes.outcomes());
      return;
    }
    long pause = now + engine.pauseNanos();
    long retry = pause - lastTry > 0 ? lastTry : pause;
    log.warn(
        "renewal of '{}' missed the quorum; the lease keeps its validity ({} ms left) and the"
            + " renewal is tried again in {} ms; nodes: {}",
        lease.resource(),
        (lease.validUntil() - now) / 1_000_000,
        (retry - now) / 1_000_000,
        votes.outcomes());
    schedule(retry);
  }

  /** {@link Lease#extend} of {@code lease} to {@code millis}: asks the store, applies the votes. */
  static <H extends LeaseStore.Held> boolean extend(
      ManagedLease<H> lease, LeaseEngine<H> engine, long millis) {
    ReentrantLock serial = lease.extendLock();
    serial.lock();
    try {
      lease.checkNotReleased("; acquire a new one");
      if (!lease.isValid()) {
        return false; // another owner may hold the lock by now
      }
      if (engine.isClosed()) {
        extendLog.warn("not extending '{}': its Redlock is closed", lease.resource());
        return false; // close waits for this lease: never beyond the validity it found
      }
      long start = engine.ticker.read();
      Tally votes;
      try {
        votes = engine.store.renew(lease.held(), millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        extendLog.warn(
            "extend of '{}' interrupted; the lease keeps its previous validity", lease.resource());
        return false;
      }
      if (applyVotes(lease, engine, votes, start, millis, false)) {
        return true;
      }
      extendLog.warn(
          "could not extend '{}': {} of {} nodes agreed (quorum {}); the lease keeps its previous"
              + " validity; nodes: {}",
          lease.resource(),
          votes.yes(),
          engine.store.size(),
          engine.store.quorum(),
          votes.outcomes());
      return false;
    } finally {
      serial.unlock();
    }
  }

  /**
   * Applies the votes on an extend or renewal sent at {@code start}; true if they extended the
   * lease. {@code onLibraryThread}: the event goes to the listeners on a callback thread, never the
   * timer or I/O thread applying it.
   */
  static <H extends LeaseStore.Held> boolean applyVotes(
      ManagedLease<H> lease,
      LeaseEngine<H> engine,
      Tally votes,
      long start,
      long ttlMillis,
      boolean onLibraryThread) {
    long until = Validity.validUntil(start, ttlMillis, engine.settings.clockDriftFactor());
    int yes = votes.yes();
    if (yes < engine.store.quorum()
        || engine.ticker.read() - until >= 0
        || !lease.extended(start, until)) {
      return false;
    }
    extendLog.debug("extended '{}' by {} ms on {} nodes", lease.resource(), ttlMillis, yes);
    long now = engine.ticker.read();
    Runnable event =
        () ->
            engine.events.lease(
                LockEvent.Kind.EXTENDED,
                lease,
                Math.max(0, until - now),
                now - start,
                yes,
                null,
                votes::outcomes);
    if (!onLibraryThread) {
      event.run();
    } else if (!engine.events.isEmpty()) {
      engine.watchdog.callback(event);
    }
    return true;
  }
}
