package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.config.RedlockConfig;
import dev.redlock.renewal.Renewal;
import dev.redlock.spi.LeaseRequest.Shape;
import dev.redlock.spi.LeaseStore;
import dev.redlock.spi.Tally;
import dev.redlock.timing.Ticker;
import dev.redlock.timing.Validity;
import dev.redlock.timing.Watchdog;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease lifecycle, whatever the store: one attempt and its verdict, release and close, and what
 * its leases share (settings, store, clock, timers, events). The library, never the store, decides
 * validity, reasons and roll-backs: the engine for attempts, each {@link ManagedLease} for its
 * extends and renewals. The store only takes, renews and gives back.
 *
 * @param <H> what the store keeps about a granted lease
 */
final class LeaseEngine<H extends LeaseStore.Held> {
  private static final Logger log = LoggerFactory.getLogger(LeaseEngine.class);
  static final String CLOSED = "this Redlock is closed";

  // What the leases, acquisitions and semaphores of this engine share:
  final RedlockConfig settings;
  final LeaseStore<H> store;
  final Ticker ticker;
  final Watchdog watchdog;
  final long roundNanos; // one round of votes: the node timeout
  final Waiters waiters;
  final Arguments arguments;
  final AsyncAttempts async;
  final Listeners events;
  final Renewal.Context renewals;

  private final LockTokens tokens = new LockTokens();
  private final Set<ManagedLease<H>> held = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AttemptTurns turns;

  /** Owns {@code store} and {@code watchdog}: closed with the engine. */
  LeaseEngine(RedlockConfig settings, LeaseStore<H> store, Ticker ticker, Watchdog watchdog) {
    this.settings = settings;
    this.store = store;
    this.ticker = ticker;
    this.watchdog = watchdog;
    this.roundNanos = settings.nodeTimeout().toNanos();
    this.events = new Listeners(settings.listeners(), store.quorum());
    this.arguments = new Arguments(settings, store);
    this.async = new AsyncAttempts(closed::get);
    this.turns = new AttemptTurns(settings.maxAttemptsInFlight());
    this.waiters = Waiters.over(store);
    this.renewals =
        new Renewal.Context(
            ticker,
            watchdog,
            Arguments.saturatedNanos(settings.maxHold()),
            roundNanos,
            this::pauseNanos,
            closed::get,
            this::refusalsBarAQuorum,
            store.quorum(),
            store.size());
  }

  int heldCount() {
    return held.size();
  }

  boolean isClosed() {
    return closed.get();
  }

  /**
   * One attempt: a token, a start time, the store's vote, and the verdict: won only with a quorum
   * and validity left, else given back and the reason named. A refused writer leaves the {@code
   * intent} mark, worked out from {@code turnBy} as its give-up time. With {@code turnBounded},
   * made only if its turn comes before {@code turnBy}, else null with nothing sent.
   */
  Attempt<H> attempt(
      Target target, long ttlMillis, WriterIntent intent, boolean turnBounded, long turnBy)
      throws InterruptedException {
    if (Thread.interrupted()) {
      throw new InterruptedException(); // interrupted already: send nothing we would roll back
    }
    store.awaitConnected(); // a new client's first connections, before the attempt's clock starts
    boolean nested = turns.heldHere();
    long askedAt =
        intent == WriterIntent.UNTIL_NEXT_ASK && target.shape() == Shape.WRITE ? ticker.read() : 0;
    if (!nested && !turns.take(turnBounded, turnBounded ? turnBy - ticker.read() : 0)) {
      return null; // no turn in time: nothing was sent (interrupted: neither)
    }
    long start;
    long validUntil;
    LeaseStore.Vote<H> vote;
    long now;
    H taken;
    ManagedLease<H> lease = null;
    boolean closedWhileWinning = false;
    try {
      ensureOpen(); // closed meanwhile: close() would never release what this attempt took
      String token = tokens.next();
      start = ticker.read();
      events.attempt(LockEvent.Kind.ATTEMPT, target.name(), 0, 0, null, null);
      validUntil = Validity.validUntil(start, ttlMillis, settings.clockDriftFactor());
      long intentMillis =
          target.shape() == Shape.WRITE
              ? intent.millis(ttlMillis, turnBy, askedAt, start, longestPauseNanos(), roundNanos)
              : 0;
      vote = store.take(target.request(token, ttlMillis, intentMillis), start);
      now = ticker.read();
      taken = vote.held();
      if (taken != null && vote.yes() >= store.quorum() && now - validUntil < 0) {
        lease = new ManagedLease<>(this, taken, target, ttlMillis, start, validUntil);
        held.add(lease); // within the turn: close() either waits for this or finds it here
        if (closed.get()) {
          // close() began meanwhile: whoever marks the lease released gives it back, waiting for
          // every part as close does (the store is about to close), and the caller gets none.
          if (lease.beginRelease()) {
            held.remove(lease);
            store.giveBackAll(List.of(taken));
          } // else close() took it from held (its turn bound ran out) and gives it back
          lease = null;
          closedWhileWinning = true;
        }
      } else if (taken != null) {
        store.giveBack(taken); // taken too late: no validity left to hand out
      }
    } finally {
      if (!nested) {
        turns.end();
      }
    }
    if (closedWhileWinning) {
      throw new IllegalStateException(CLOSED + " while the attempt was won (given back)");
    }
    if (lease != null) {
      events.lease(
          LockEvent.Kind.ACQUIRED,
          lease,
          validUntil - now,
          now - start,
          vote.yes(),
          null,
          vote.tally()::outcomes);
      if (log.isDebugEnabled()) { // the hot path: no argument array unless someone reads it
        log.debug(
            "acquired '{}' on {} of {} nodes in {} us, valid for {} ms, fencing token {}",
            lease.resource(),
            vote.yes(),
            store.size(),
            (now - start) / 1000,
            (validUntil - now) / 1_000_000,
            taken.fencingToken());
      }
      return new Attempt<>(lease, null, vote, now - start, validUntil - now, store);
    }
    if (taken != null) { // given back above: free again, so the first in line may ask
      releasedHere(target, 0, false);
    }
    Reason reason = whyLost(vote, now - validUntil >= 0);
    if (log.isDebugEnabled()) {
      log.debug("attempt on '{}' lost ({}): {}", target.name(), reason, vote.tally().outcomes());
    }
    events.attempt(
        LockEvent.Kind.FAILED,
        target.name(),
        now - start,
        vote.yes(),
        reason.name(),
        vote.tally()::outcomes);
    return new Attempt<>(null, reason, vote, now - start, Math.max(0, validUntil - now), store);
  }

  /**
   * Why an attempt was lost: "held elsewhere" only when the refusals alone rule out a quorum; if
   * failed or silent nodes were needed to block it, it is an outage, not contention.
   */
  private Reason whyLost(LeaseStore.Vote<H> vote, boolean pastValidity) {
    if (vote.yes() >= store.quorum() && pastValidity) {
      return Reason.VALIDITY_EXPIRED;
    }
    return refusalsBarAQuorum(vote.tally()) ? Reason.HELD_ELSEWHERE : Reason.QUORUM_UNREACHABLE;
  }

  /** Whether the nodes that refused are enough by themselves to bar a quorum: none can win. */
  private boolean refusalsBarAQuorum(Tally votes) {
    return barQuorum(votes, status -> status == NodeOutcome.Status.REFUSED);
  }

  /** Whether the nodes whose status is {@code counted} are enough by themselves to bar a quorum. */
  boolean barQuorum(Tally votes, Predicate<NodeOutcome.Status> counted) {
    int count = 0;
    for (NodeOutcome outcome : votes.outcomes()) {
      if (counted.test(outcome.status())) {
        count++;
      }
    }
    return count > store.size() - store.quorum();
  }

  /**
   * Applies the votes on an extend or renewal of {@code lease} sent at {@code start}; true if they
   * extended it. {@code onLibraryThread}: the event goes to the listeners on a callback thread,
   * never the timer or I/O thread applying it.
   */
  boolean applyVotes(
      ManagedLease<H> lease, Tally votes, long start, long ttlMillis, boolean onLibraryThread) {
    long until = Validity.validUntil(start, ttlMillis, settings.clockDriftFactor());
    int yes = votes.yes();
    if (yes < store.quorum() || ticker.read() - until >= 0 || !lease.extended(start, until)) {
      return false;
    }
    log.debug("extended '{}' by {} ms on {} nodes", lease.resource(), ttlMillis, yes);
    long now = ticker.read();
    Runnable event =
        () ->
            events.lease(
                LockEvent.Kind.EXTENDED,
                lease,
                Math.max(0, until - now),
                now - start,
                yes,
                null,
                votes::outcomes);
    if (!onLibraryThread) {
      event.run();
    } else if (!events.isEmpty()) {
      watchdog.callback(event);
    }
    return true;
  }

  /** Gives a lease back (the lease has marked itself released). */
  void release(ManagedLease<H> lease) {
    held.remove(lease);
    events.lease(LockEvent.Kind.RELEASED, lease, 0, 0, 0, null, null);
    Target target = lease.target();
    if (target.isSide()) {
      store.giveBack(lease.held());
      releasedHere(target, 0, false); // after the store answered, as below
      return;
    }
    // Before the store is asked: the nodes' word on this release may come before its answer.
    waiters.releasing(target.line(), lease.fencingToken());
    boolean othersWait = store.giveBackToWaiters(lease.held());
    // After the store answered: the woken thread's take follows this release on every node.
    releasedHere(target, lease.fencingToken(), othersWait);
  }

  long longestPauseNanos() {
    return settings.retryDelay().toNanos() + settings.retryJitter().toNanos();
  }

  long pauseNanos() {
    long jitter = settings.retryJitter().toNanos();
    return settings.retryDelay().toNanos()
        + (jitter == 0 ? 0 : ThreadLocalRandom.current().nextLong(jitter + 1));
  }

  void ensureOpen() {
    if (closed.get()) {
      throw new IllegalStateException(CLOSED);
    }
  }

  /**
   * Releases the leases nobody keeps alive, waits (bounded) for the holders of the others, then
   * closes the store and the timers.
   */
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    waiters.wakeAll(); // their next attempt fails at once: closed
    async.close(2 * settings.nodeTimeout().toMillis());
    // Every turn, so the attempts in flight have come to their verdict: a lease they won is in
    // held. Bounded by what an attempt may spend in its turn (a vote, a fence raise, a give-back
    // to every node); one that outlasts it gives back what it wins itself (see attempt).
    long bound =
        TimeUnit.MILLISECONDS.toNanos(
            5 * settings.nodeTimeout().toMillis() + AsyncAttempts.CLOSE_MARGIN_MILLIS);
    int taken = turns.takeAllForClose(bound);
    List<ManagedLease<H>> left = new ArrayList<>();
    List<ManagedLease<H>> keptAlive = new ArrayList<>();
    try {
      for (ManagedLease<H> lease : new ArrayList<>(held)) {
        if (lease.stopRenewingForClose()) {
          keptAlive.add(lease); // a holder may be working under it: never freed under its feet
        } else if (lease.beginRelease()) {
          held.remove(lease);
          left.add(lease);
        }
      }
    } finally {
      turns.giveBack(taken);
    }
    List<H> releasing = new ArrayList<>();
    for (ManagedLease<H> lease : left) { // listeners run with no turn held
      events.lease(LockEvent.Kind.RELEASED, lease, 0, 0, 0, null, null);
      releasing.add(lease.held());
    }
    store.giveBackAll(releasing);
    awaitHolders(keptAlive, bound);
    store.close();
    watchdog.close();
    log.debug("closed; released {} lease(s) still held", releasing.size());
  }

  /**
   * Waits for each kept-alive lease ({@link ManagedLease#awaitReleaseOrLoss}): a job still running
   * at shutdown keeps its lock to the end of its validity, never less. A lost lease is not given
   * back: its keys run out on the nodes, no sooner than the holder was told.
   */
  private void awaitHolders(List<ManagedLease<H>> keptAlive, long graceNanos) {
    if (keptAlive.isEmpty()) {
      return;
    }
    long longest = 0;
    for (ManagedLease<H> lease : keptAlive) {
      longest = Math.max(longest, lease.validUntil() - ticker.read());
    }
    log.info(
        "closing: waiting up to {} ms for {} kept-alive lease(s) to be released by their holders;"
            + " renewal stopped, and a lease not released by the end of its validity is lost",
        Math.max(0, longest / 1_000_000),
        keptAlive.size());
    for (ManagedLease<H> lease : keptAlive) {
      lease.awaitReleaseOrLoss(graceNanos);
      if (lease.beginRelease()) { // lost: a late release() by its holder must not reach the store
        held.remove(lease);
      }
    }
  }

  /**
   * This service gave back a lease of {@code target}, of {@code fencingToken} (0 if none was handed
   * out): the first in its line may ask at once, and, for a semaphore's permit, the first waiting
   * for that semaphore (looked for only while some line exists). For a side of a read-write lock:
   * the first writer, and after a write lease the first reader too (readers never wait for a read
   * lease).
   */
  private void releasedHere(Target target, long fencingToken, boolean othersWait) {
    if (target.isSide()) {
      waiters.released(Target.side(target.name(), Shape.WRITE).line(), 0, false);
      if (target.shape() == Shape.WRITE) {
        waiters.released(Target.side(target.name(), Shape.READ).line(), 0, false);
      }
      return;
    }
    Object waitingFor = target.line();
    waiters.released(waitingFor, fencingToken, othersWait);
    if (waitingFor instanceof String resource
        && waiters.lineCount() > 0
        && PermitSlots.isPermit(resource)) {
      waiters.releasedWhere(line -> PermitSlots.serves(resource, line), fencingToken);
    }
  }
}
