package dev.redlock;

import dev.redlock.spi.LeaseStore;
import dev.redlock.spi.Tally;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledFuture;

/**
 * The renewal of one kept-alive lease, owned by it: when each renewal falls due, sending it, and
 * what its outcome does (schedule the next, retry, or lose the lease); the engine says whether the
 * votes extended the lease. Lock order: the lease's monitor may be held while calling {@link
 * #stop}; this object never calls the lease while holding its own.
 *
 * @param <H> what the store keeps about the lease
 */
final class Renewal<H extends LeaseStore.Held> {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Renewal.class);

  private final ManagedLease<H> lease;
  private final LeaseEngine<H> engine;
  private final long intervalNanos;
  private final long maxHoldUntil;
  private ScheduledFuture<?> next; // guarded by this
  private boolean stopped; // guarded by this

  /**
   * @param intervalNanos from one renewal's start to the next ({@code ttl × renewalFraction})
   * @param maxHoldUntil when the lease is lost by policy, on the monotonic clock
   */
  Renewal(ManagedLease<H> lease, LeaseEngine<H> engine, long intervalNanos, long maxHoldUntil) {
    this.lease = lease;
    this.engine = engine;
    this.intervalNanos = intervalNanos;
    this.maxHoldUntil = maxHoldUntil;
  }

  /** Stops renewing: the lease was released or lost. Final. */
  synchronized void stop() {
    stopped = true;
    if (next != null) {
      next.cancel(false);
    }
  }

  long maxHoldUntil() {
    return maxHoldUntil;
  }

  private synchronized boolean isStopped() {
    return stopped;
  }

  /**
   * A renewal fell due (on a timer thread): sent without a thread waiting where the store can
   * ({@link LeaseStore#renewAsync}), else on a renewal thread.
   */
  private void due() {
    OptionalLong due = startIfDue();
    if (due.isEmpty()) {
      return;
    }
    long start = due.getAsLong();
    LeaseStore<H> store = engine.store;
    if (store.renewAsync(lease.held(), lease.ttlMillis(), votes -> renewed(votes, start))) {
      return;
    }
    engine.watchdog.renewal(
        () -> {
          OptionalLong now = startIfDue(); // it may have waited in line
          if (now.isEmpty()) {
            return;
          }
          Tally votes;
          try {
            votes = store.renew(lease.held(), lease.ttlMillis());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closing: the lease is released or expires
            return;
          }
          renewed(votes, now.getAsLong());
        });
  }

  /**
   * The clock to count the renewal's validity from, or empty if it is no longer due (stopped, or
   * the lease's time is up: then the lease is lost here).
   */
  OptionalLong startIfDue() {
    long start = engine.ticker.read();
    if (isStopped()) {
      return OptionalLong.empty();
    }
    if (!lease.isValid()) {
      lease.loseOnLibraryThread(LeaseLostException.Reason.EXPIRED, List.of());
      return OptionalLong.empty();
    }
    if (start - maxHoldUntil >= 0) {
      lease.loseOnLibraryThread(LeaseLostException.Reason.MAX_HOLD_REACHED, List.of());
      return OptionalLong.empty();
    }
    return OptionalLong.of(start);
  }

  /**
   * A renewal's outcome. Extended: the next renewal one interval after this one's start, or after
   * the start of the extend that gave the validity kept, if later (never an older start, which
   * would fall due at once). Not extended: the lease keeps its validity, and the renewal is tried
   * again after the retry pause, no later than the last try that can be decided in time. The lease
   * is lost when no try can be, or when so many nodes refused that none can win.
   */
  void renewed(Tally votes, long start) {
    if (engine.extended(lease, votes, start)) {
      long keptFrom = lease.renewedFrom(); // read before taking this monitor (lock order)
      schedule(keptFrom - start > 0 ? keptFrom + intervalNanos : start + intervalNanos);
      return;
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

  /** Schedules the next renewal at {@code at}, unless stopped. */
  synchronized void schedule(long at) {
    if (!stopped) {
      next = engine.watchdog.at(at, this::due);
    }
  }
}
