package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.internal.Names;
import dev.redlock.internal.Ticker;
import dev.redlock.spi.LeaseStore;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Semaphore} as {@code permits} mutexes: permit {@code i} is the engine's lease of the
 * resource {@code name@permit:i}. Nothing here decides a grant: each permit is won or refused by
 * the engine's one attempt ({@link LeaseEngine#attempt}) on the store, exactly as a mutex is, so a
 * permit has the mutex's safety (one holder per permit resource), restart guard, renewal, fencing,
 * events and metrics, on every store. This class only chooses which permits to ask and when to ask
 * again.
 *
 * <p>Why not one counted set per node (grant when a majority of nodes has room below K): for K ≥ 2
 * that is unsafe. With 3 nodes and K = 2, permits A, B, C can sit as {A, B}, {B, C}, {A, C} on the
 * three nodes: every node is within K, every permit is on a majority, three permits are valid.
 * Majorities intersect, but for K ≥ 2 an intersection node with room for both says nothing. Slots
 * keep the one argument that works, per slot (docs/design.md, "Semaphores").
 *
 * @param <H> what the store keeps about a granted lease
 */
final class PermitSlots<H extends LeaseStore.Held> implements Semaphore {
  private final LeaseEngine<H> engine;
  private final String name;
  private final String[] resources;
  private final WaitingLine line;

  /**
   * What this service's threads waiting for the semaphore {@code name} of {@code permits} permits
   * stand in line under (in {@link Waiters}): a record never equals a resource's name nor a set's
   * list of names, so the semaphore's line is apart from the lines of its permits' resources. One
   * line per number of permits: a waiter that may take permit 4 never waits behind one that may
   * only take 0 and 1 (a semaphore being grown, in one service).
   */
  record WaitingLine(String name, int permits) {}

  private PermitSlots(LeaseEngine<H> engine, String name, String[] resources) {
    this.engine = engine;
    this.name = name;
    this.resources = resources;
    this.line = new WaitingLine(name, resources.length);
  }

  /**
   * Checks the arguments and makes the permits' resource names.
   *
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException for a blank name, a name holding {@link #PERMIT_MARK}, a
   *     number of permits out of 1..{@link #MAX_PERMITS}, or a name whose permits' resources the
   *     store refuses (too long for a table's key, the nodes' reserved marks)
   */
  static <H extends LeaseStore.Held> PermitSlots<H> create(
      LeaseEngine<H> engine, String name, int permits) {
    return new PermitSlots<>(
        engine, name, Names.permitResources(name, permits, engine.store()::checkResource));
  }

  /**
   * Whether {@code line} is a line of waiters that a release of the permit {@code resource} may
   * serve: a semaphore line of that permit's semaphore, of more permits than the permit's index.
   * False if {@code resource} is no permit's name. What a release of it wakes ({@link
   * LeaseEngine}).
   */
  static boolean serves(String resource, Object line) {
    if (!(line instanceof WaitingLine waiting) || !resource.startsWith(waiting.name())) {
      return false;
    }
    int mark = waiting.name().length();
    if (!resource.startsWith(PERMIT_MARK, mark)) {
      return false;
    }
    try {
      return Integer.parseInt(resource.substring(mark + PERMIT_MARK.length())) < waiting.permits();
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /**
   * Whether {@code resource} is named like a permit (has the mark): cheap, before {@link #serves}.
   */
  static boolean isPermit(String resource) {
    return resource.indexOf(PERMIT_MARK) > 0;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public int permits() {
    return resources.length;
  }

  @Override
  public String permitResource(int index) {
    if (index < 0 || index >= resources.length) {
      throw new IllegalArgumentException(
          "index must be between 0 and " + (resources.length - 1) + ", was " + index);
    }
    return resources[index];
  }

  @Override
  public Optional<Lease> tryAcquire(Duration ttl) {
    engine.ensureOpen();
    long ttlMillis = engine.checkTtl(ttl);
    long began = engine.ticker().read();
    Round round;
    try {
      round = round(ttlMillis, false, 0, false);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RedlockException(
          "interrupted while acquiring a permit of '"
              + name
              + "'; nothing is held (what was sent is rolled back)",
          e);
    }
    if (round.attempt.lease != null) {
      return Optional.of(round.attempt.lease);
    }
    if (round.attempt.reason == Reason.HELD_ELSEWHERE) {
      return Optional.empty();
    }
    throw failure(round, 1, engine.ticker().read() - began);
  }

  @Override
  public Lease acquire(Duration ttl, Duration maxWait) throws InterruptedException {
    engine.ensureOpen();
    long ttlMillis = engine.checkTtl(ttl);
    return acquire(ttlMillis, maxWait);
  }

  @Override
  public <T, E extends Exception> T withPermit(Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException {
    Objects.requireNonNull(task, "task must not be null");
    engine.ensureOpen();
    long ttlMillis = engine.checkTtl(ttl);
    engine.checkRenewable(ttl); // before acquiring: a permit we could not renew is not taken
    return engine.runRenewed(acquire(ttlMillis, maxWait), task);
  }

  /**
   * Rounds until a permit is won or {@code maxWait} is spent, waiting between them as the engine's
   * {@code acquire} waits for a resource: behind this service's threads already waiting for this
   * semaphore, or in line once a round is refused; the first asks again after the retry pause, or
   * at once when this service releases one of the permits.
   */
  private ManagedLease<H> acquire(long ttlMillis, Duration maxWait) throws InterruptedException {
    Objects.requireNonNull(maxWait, "maxWait must not be null");
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("maxWait must be >= 0, was " + maxWait);
    }
    Ticker ticker = engine.ticker();
    long began = ticker.read();
    long waitNanos = saturatedNanos(maxWait);
    boolean unbounded = waitNanos > Long.MAX_VALUE / 4; // as the engine: centuries mean no limit
    long giveUpAt = began + (unbounded ? 0 : waitNanos);
    Waiters waiters = engine.waiters();
    Waiters.Line waiting = waiters.anyWaiting(line) ? waiters.join(line) : null;
    boolean won = false;
    Round previous = null;
    try {
      for (int rounds = 1; ; rounds++) {
        if (waiting != null) {
          engine.waiters().awaitTurn(waiting, unbounded, giveUpAt, engine);
        }
        long releasesSeen = waiters.releases();
        Round round = round(ttlMillis, !unbounded, giveUpAt, previous != null);
        if (round == null) { // no turn before maxWait was spent: the last round's failure
          throw failure(previous, rounds - 1, ticker.read() - began);
        }
        previous = round;
        if (round.attempt.lease != null) {
          won = true;
          return round.attempt.lease;
        }
        long left = unbounded ? Long.MAX_VALUE : giveUpAt - ticker.read();
        if (left <= 0) {
          throw failure(round, rounds, ticker.read() - began);
        }
        if (waiting == null) {
          waiting = waiters.join(line);
          waiters.releasedSince(waiting, releasesSeen); // a release before the line existed
        }
      }
    } finally {
      if (waiting != null) {
        waiters.leave(line, waiting, won);
      }
    }
  }

  /** A round's outcome: the attempt that won, or the last refused one, and its permit. */
  private final class Round {
    final Attempt<H> attempt;
    final String resource;

    Round(Attempt<H> attempt, String resource) {
      this.attempt = attempt;
      this.resource = resource;
    }
  }

  /**
   * Asks each permit once, from a random one, until one is won, or {@code giveUpAt} (on the
   * engine's ticker; {@code bounded} false: no bound) has passed. A permit refused for another
   * reason than contention does not end the round unless the nodes that failed, timed out or are
   * quarantined are enough by themselves to rule out a quorum: every permit lives on the same
   * nodes, so then the next would fail the same way, each costing up to a timeout; with fewer, a
   * permit may be blocked by another client's refusals plus a node that is out, and the next one
   * free. The round then answers the first such failure, or the last refusal.
   *
   * <p>Each attempt waits for its turn ({@code maxAttemptsInFlight}): the first of a round that is
   * not the caller's first ({@code again}) and every later one only until {@code giveUpAt} (when
   * {@code bounded}), so that turns never stretch an {@code acquire} past its maxWait plus one
   * attempt. A round whose attempt found no turn in time ends there: with the answer so far, or
   * null if it had none.
   */
  private Round round(long ttlMillis, boolean bounded, long giveUpAt, boolean again)
      throws InterruptedException {
    int permits = resources.length;
    int first = permits == 1 ? 0 : ThreadLocalRandom.current().nextInt(permits);
    Round failed = null;
    Round last = null;
    for (int i = 0; ; i++) {
      int slot = first + i < permits ? first + i : first + i - permits;
      Attempt<H> attempt =
          engine.attempt(resources[slot], ttlMillis, bounded && (again || i > 0), giveUpAt);
      if (attempt == null) {
        return failed != null ? failed : last;
      }
      Round round = new Round(attempt, resources[slot]);
      last = round;
      if (attempt.lease != null) {
        return round;
      }
      if (attempt.reason != Reason.HELD_ELSEWHERE && failed == null) {
        failed = round;
      }
      if (i == permits - 1
          || outageRulesOutAQuorum(attempt)
          || (bounded && engine.ticker().read() - giveUpAt >= 0)) {
        return failed != null ? failed : round;
      }
    }
  }

  /** Whether the nodes that did not answer yes or no (failed, silent, quarantined) bar a quorum. */
  private boolean outageRulesOutAQuorum(Attempt<H> attempt) {
    int out = 0;
    for (NodeOutcome outcome : attempt.vote.tally().outcomes()) {
      if (outcome.status() != NodeOutcome.Status.OK
          && outcome.status() != NodeOutcome.Status.REFUSED) {
        out++;
      }
    }
    return out > attempt.vote.tally().size() - engine.quorum();
  }

  private LockUnavailableException failure(Round round, int rounds, long waitedNanos) {
    LockUnavailableException last = round.attempt.failure(round.resource, 1, 0);
    String why =
        round.attempt.reason == Reason.HELD_ELSEWHERE
            ? "all " + resources.length + " permits held elsewhere"
            : "permit '" + round.resource + "' failed: " + round.attempt.reason;
    LockUnavailableException e =
        new LockUnavailableException(
            "could not acquire a permit of '"
                + name
                + "' ("
                + why
                + ") after "
                + rounds
                + " round(s) in "
                + TimeUnit.NANOSECONDS.toMillis(waitedNanos)
                + " ms; last attempt: "
                + last.getMessage(),
            name,
            round.attempt.reason,
            rounds,
            last.nodeOutcomes());
    for (Throwable suppressed : last.getSuppressed()) {
      e.addSuppressed(suppressed);
    }
    return e;
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  @Override
  public String toString() {
    return "Semaphore[" + name + ", " + resources.length + " permits]";
  }
}
