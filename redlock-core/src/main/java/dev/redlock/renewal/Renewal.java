package dev.redlock.renewal;

import dev.redlock.LeaseLostException;
import dev.redlock.spi.Tally;
import dev.redlock.timing.Ticker;
import dev.redlock.timing.Watchdog;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The renewal of one kept-alive lease, owned by it: when each renewal falls due, sending it to the
 * store, and what its outcome does (schedule the next, retry, or lose the lease), up to maxHold;
 * and an extend asked for by hand ({@link #extend}), whose votes count the same way. Lock order:
 * the lease's monitor may be held while calling {@link #start} or {@link #stop}; this object never
 * calls the lease while holding its own.
 */
public final class Renewal {
  private static final Logger log = LoggerFactory.getLogger(Renewal.class);
  // Extends log under the engine's name, with the grants (docs/operations.md, "Logs").
  private static final Logger extendLog = LoggerFactory.getLogger("dev.redlock.LeaseEngine");

  /**
   * What the renewals of one Redlock share.
   *
   * @param maxHoldNanos how long a lease may be kept alive in all, saturated ({@code
   *     Long.MAX_VALUE}: no limit)
   * @param roundNanos one round of votes: the node timeout
   * @param pauseNanos the pause before a retry, jitter included
   * @param closed whether the Redlock is closed
   * @param refusalsBarAQuorum whether the nodes that refused are enough by themselves to bar a
   *     quorum: no retry can win
   * @param quorum how many of the store's nodes must agree
   * @param size how many nodes the store asks
   */
  public record Context(
      Ticker ticker,
      Watchdog watchdog,
      long maxHoldNanos,
      long roundNanos,
      LongSupplier pauseNanos,
      BooleanSupplier closed,
      Predicate<Tally> refusalsBarAQuorum,
      int quorum,
      int size) {}

  private final RenewedLease lease;
  private final Context context;
  private final long intervalNanos; // from one renewal's start to the next: ttl × renewalFraction
  private final long maxHoldUntil; // when the lease is lost by policy, on the monotonic clock
  private ScheduledFuture<?> next; // guarded by this
  private ScheduledFuture<?> maxHold; // guarded by this; null if maxHold is beyond the clock
  private boolean stopped; // guarded by this

  /**
   * Renews {@code lease} every {@code intervalNanos}, granted at {@code grantedAt}; not started.
   */
  public Renewal(RenewedLease lease, Context context, long intervalNanos, long grantedAt) {
    this.lease = lease;
    this.context = context;
    this.intervalNanos = intervalNanos;
    // Saturated: a maxHold of centuries (the config has no upper bound) means none.
    long maxHoldNanos = context.maxHoldNanos();
    this.maxHoldUntil =
        grantedAt + maxHoldNanos < grantedAt ? Long.MAX_VALUE : grantedAt + maxHoldNanos;
  }

  /** Renews one interval after {@code renewedFrom}, and loses the lease at maxHold. */
  public synchronized void start(long renewedFrom) {
    schedule(renewedFrom + intervalNanos);
    if (maxHoldUntil != Long.MAX_VALUE) {
      // Its own timer: a renewal in flight or waiting for a thread must not put maxHold off.
      maxHold =
          context
              .watchdog()
              .at(
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
  public synchronized void stop() {
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
      next = context.watchdog().at(at, this::due);
    }
  }

  /**
   * A renewal fell due (on a timer thread): sent without a thread waiting where the store can
   * ({@link RenewedLease#renewAsync}), else on a renewal thread.
   */
  private void due() {
    long start = context.ticker().read();
    if (!stillDue(start)) {
      return;
    }
    if (lease.renewAsync(lease.ttlMillis(), votes -> renewed(votes, start))) {
      return;
    }
    context
        .watchdog()
        .renewal(
            () -> {
              long now = context.ticker().read(); // it may have waited in line
              if (stillDue(now)) {
                try {
                  renewed(lease.renew(lease.ttlMillis()), now);
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
    if (lease.applyVotes(votes, start, lease.ttlMillis(), true)) {
      long keptFrom = lease.renewedFrom(); // read before taking this monitor (lock order)
      schedule((keptFrom - start > 0 ? keptFrom : start) + intervalNanos);
      return;
    }
    synchronized (this) {
      if (stopped) { // released or lost meanwhile: nothing to retry, nothing to warn of
        return;
      }
    }
    long now = context.ticker().read();
    long lastTry = lease.validUntil() - context.roundNanos(); // decided before the validity ends
    if (context.refusalsBarAQuorum().test(votes) || lastTry - now <= 0) {
      lease.loseOnLibraryThread(LeaseLostException.Reason.RENEWAL_FAILED, votes.outcomes());
      return;
    }
    long pause = now + context.pauseNanos().getAsLong();
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

  /**
   * An extend of {@code lease} to {@code millis} asked for by hand ({@code Lease.extend}): asks the
   * store, applies the votes; false if the lease is no longer valid or a quorum did not agree.
   */
  public static boolean extend(RenewedLease lease, Context context, long millis) {
    ReentrantLock serial = lease.extendLock();
    serial.lock();
    try {
      lease.checkNotReleased("; acquire a new one");
      if (!lease.isValid()) {
        return false; // another owner may hold the lock by now
      }
      if (context.closed().getAsBoolean()) {
        extendLog.warn("not extending '{}': its Redlock is closed", lease.resource());
        return false; // close waits for this lease: never beyond the validity it found
      }
      long start = context.ticker().read();
      Tally votes;
      try {
        votes = lease.renew(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        extendLog.warn(
            "extend of '{}' interrupted; the lease keeps its previous validity", lease.resource());
        return false;
      }
      if (lease.applyVotes(votes, start, millis, false)) {
        return true;
      }
      extendLog.warn(
          "could not extend '{}': {} of {} nodes agreed (quorum {}); the lease keeps its previous"
              + " validity; nodes: {}",
          lease.resource(),
          votes.yes(),
          context.size(),
          context.quorum(),
          votes.outcomes());
      return false;
    } finally {
      serial.unlock();
    }
  }
}
