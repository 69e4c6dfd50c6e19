package dev.redlock;

import dev.redlock.spi.LeaseStore;
import dev.redlock.spi.Tally;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ScheduledFuture;

/**
 * The watchdog's renewal of one kept-alive lease ({@link Lease#keepAlive}, {@code withLock}): when
 * the next renewal falls due, sending it, and what its outcome does — the next renewal scheduled
 * one interval after the renewal that ran, a renewal that missed the quorum tried again while the
 * validity lasts, or the lease lost (no renewal could win in time, the validity ran out, or {@code
 * maxHold} was reached). One per kept-alive lease, made and owned by the lease; it reaches the
 * engine only through {@link Renewer}, and the engine alone says whether a renewal's votes extended
 * the lease.
 *
 * <p>Lock order: the lease's monitor may be held while calling {@link #stop}; this object never
 * calls the lease while holding its own.
 *
 * @param <H> what the store keeps about the lease
 */
final class Renewal<H extends LeaseStore.Held> {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Renewal.class);

  /** What a renewal needs of the engine. */
  interface Renewer<H extends LeaseStore.Held> {
    /**
     * Sends one renewal of {@code renewal}'s lease, on whatever thread the store needs: it first
     * asks {@link Renewal#startIfDue} on that thread, and sends nothing if the renewal is no longer
     * due; else {@link Renewal#renewed} runs once, on a library thread, with the votes and that
     * start.
     */
    void renew(Renewal<H> renewal);

    /**
     * The verdict on a renewal's votes: true if they extended the lease (and the lease now holds
     * the new validity), false if the lease must be lost.
     */
    boolean extended(ManagedLease<H> lease, Tally votes, long start);

    /** Runs {@code task} at {@code instant} on the monotonic clock. */
    ScheduledFuture<?> at(long instant, Runnable task);

    /** The monotonic clock. */
    long now();

    /** How long a renewal may take to be decided: one round of {@code nodeTimeout}. */
    long roundNanos();

    /** The pause before trying again: {@code retryDelay} plus random jitter. */
    long pauseNanos();

    /** Whether enough nodes said the lease is no longer theirs that no renewal can ever win. */
    boolean hopeless(Tally votes);
  }

  private final ManagedLease<H> lease;
  private final Renewer<H> engine;
  private final long intervalNanos;
  private final long maxHoldUntil;
  private ScheduledFuture<?> next; // guarded by this
  private boolean stopped; // guarded by this

  /**
   * @param intervalNanos from one renewal's start to the next ({@code ttl × renewalFraction})
   * @param maxHoldUntil when the lease is lost by policy, on the monotonic clock
   */
  Renewal(ManagedLease<H> lease, Renewer<H> engine, long intervalNanos, long maxHoldUntil) {
    this.lease = lease;
    this.engine = engine;
    this.intervalNanos = intervalNanos;
    this.maxHoldUntil = maxHoldUntil;
  }

  /** Schedules the first renewal, one interval after {@code from}. */
  synchronized void start(long from) {
    if (!stopped) {
      next = engine.at(from + intervalNanos, this::due);
    }
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

  /** A renewal fell due (on a timer thread). */
  private void due() {
    engine.renew(this);
  }

  /**
   * Whether the renewal is still due now, on the thread about to send it (a timer thread, or a
   * renewal thread it waited for): the clock to count its validity from, or empty if not (stopped,
   * or the lease's time is up: then the lease is lost here).
   */
  OptionalLong startIfDue() {
    long start = engine.now();
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

  H held() {
    return lease.held();
  }

  long ttlMillis() {
    return lease.ttlMillis();
  }

  /**
   * A renewal's outcome. Extended: the next renewal one interval after the renewal that ran, or
   * after the start of the extend that gave the validity kept, if later; never after an older
   * start: after an extend longer than the ttl the kept validity's start stays behind, and renewals
   * counted from it would fall due at once, again and again.
   *
   * <p>Not extended: the lease keeps the validity it had (a failed extend shortens nothing), so the
   * renewal is tried again after the retry pause ({@code retryDelay} and jitter), no later than the
   * last moment a try can still be decided before the validity runs out. The lease is lost only
   * when no try can be decided in time any more, or when enough nodes said the key is no longer the
   * lease's that none can ever win.
   */
  void renewed(Tally votes, long start) {
    if (engine.extended(lease, votes, start)) {
      long keptFrom = lease.renewedFrom(); // read before taking this monitor (lock order)
      schedule(keptFrom - start > 0 ? keptFrom + intervalNanos : start + intervalNanos);
      return;
    }
    long now = engine.now();
    long lastTry = lease.validUntil() - engine.roundNanos(); // decided before the validity ends
    if (engine.hopeless(votes) || lastTry - now <= 0) {
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

  private synchronized void schedule(long at) {
    if (!stopped) {
      next = engine.at(at, this::due);
    }
  }
}
