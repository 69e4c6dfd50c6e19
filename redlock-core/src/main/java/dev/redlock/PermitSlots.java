package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.internal.Names;
import dev.redlock.spi.LeaseStore;
import dev.redlock.timing.Ticker;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A {@link Semaphore} as {@code permits} mutexes: permit {@code i} is the engine's lease of the
 * resource {@code name@permit:i}, won or refused by the engine's attempt exactly as a mutex is.
 * This class only chooses which permits to ask and when to ask again. Why not a counted set per
 * node: docs/design.md, "Semaphores".
 *
 * @param <H> what the store keeps about a granted lease
 */
final class PermitSlots<H extends LeaseStore.Held> implements Semaphore {
  private final LeaseEngine<H> engine;
  private final String name;
  private final String[] resources;
  private final WaitingLine line;

  /**
   * The key of the waiting line of this semaphore ({@link Waiters}): apart from any resource's, and
   * one per number of permits, so a waiter that may take permit 4 never waits behind one that may
   * only take 0 and 1.
   */
  record WaitingLine(String name, int permits) {}

  /** Checks the arguments as {@link Names#permitResources} does. */
  PermitSlots(LeaseEngine<H> engine, String name, int permits) {
    this.engine = engine;
    this.name = name;
    this.resources = Names.permitResources(name, permits, engine.store::checkResource);
    this.line = new WaitingLine(name, permits);
  }

  /**
   * Whether a release of the permit {@code resource} may serve the waiters of {@code line}: a line
   * of that permit's semaphore, of more permits than the permit's index.
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

  /** Whether {@code resource} is named like a permit: cheap, before {@link #serves}. */
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
    long ttlMillis = engine.arguments.ttl(ttl);
    long began = engine.ticker.read();
    Round<H> round;
    try {
      round = round(ttlMillis, false, 0, false);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Attempt.interrupted("a permit of '" + name + "'", e);
    }
    if (round.attempt.lease != null) {
      return Optional.of(round.attempt.lease);
    }
    if (round.attempt.reason == Reason.HELD_ELSEWHERE) {
      return Optional.empty();
    }
    throw failure(round, 1, engine.ticker.read() - began);
  }

  @Override
  public Lease acquire(Duration ttl, Duration maxWait) throws InterruptedException {
    engine.ensureOpen();
    return acquire(engine.arguments.ttl(ttl), maxWait);
  }

  @Override
  public <T, E extends Exception> T withPermit(Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException {
    Objects.requireNonNull(task, "task must not be null");
    engine.ensureOpen();
    long ttlMillis = engine.arguments.ttl(ttl);
    engine.arguments.renewable(ttl); // before acquiring: a permit we could not renew is not taken
    return Acquisitions.runRenewed(acquire(ttlMillis, maxWait), task);
  }

  /**
   * Rounds until a permit is won or {@code maxWait} is spent, in this semaphore's waiting line as
   * {@code acquire} waits for a resource.
   */
  private Lease acquire(long ttlMillis, Duration maxWait) throws InterruptedException {
    long waitNanos = Arguments.maxWaitNanos(maxWait);
    Ticker ticker = engine.ticker;
    long began = ticker.read();
    boolean unbounded = waitNanos > Long.MAX_VALUE / 4; // as Retries: centuries mean no limit
    long giveUpAt = began + (unbounded ? 0 : waitNanos);
    Waiters.Attempts rounds =
        new Waiters.Attempts() {
          private int count;
          private Round<H> previous;

          @Override
          public Lease next() throws InterruptedException {
            Round<H> round = round(ttlMillis, !unbounded, giveUpAt, previous != null);
            if (round == null) { // no turn before maxWait was spent: the last round's failure
              throw failure(previous, count, ticker.read() - began);
            }
            count++;
            previous = round;
            if (round.attempt.lease == null && !unbounded && giveUpAt - ticker.read() <= 0) {
              throw failure(round, count, ticker.read() - began);
            }
            return round.attempt.lease;
          }
        };
    return engine.waiters.inLine(line, false, unbounded, giveUpAt, engine, rounds);
  }

  /** A round's outcome: the attempt that won, or the last refused one, and its permit. */
  private record Round<H extends LeaseStore.Held>(Attempt<H> attempt, String resource) {}

  /**
   * Asks each permit once, from a random one, until one is won or {@code giveUpAt} has passed (when
   * {@code bounded}). A failure other than contention ends the round only if the nodes that failed
   * or are out rule out a quorum by themselves (every permit lives on the same nodes); the round
   * answers the first such failure, or the last refusal. Each attempt but the caller's first
   * ({@code again}) waits for its turn only until {@code giveUpAt}; one that finds none ends the
   * round with the answer so far, or null.
   */
  private Round<H> round(long ttlMillis, boolean bounded, long giveUpAt, boolean again)
      throws InterruptedException {
    int permits = resources.length;
    int first = permits == 1 ? 0 : ThreadLocalRandom.current().nextInt(permits);
    Round<H> failed = null;
    Round<H> last = null;
    for (int i = 0; ; i++) {
      int slot = first + i < permits ? first + i : first + i - permits;
      Attempt<H> attempt =
          engine.attempt(
              Target.one(resources[slot]),
              ttlMillis,
              WriterIntent.NONE,
              bounded && (again || i > 0),
              giveUpAt);
      if (attempt == null) {
        return failed != null ? failed : last;
      }
      Round<H> round = new Round<>(attempt, resources[slot]);
      last = round;
      if (attempt.lease != null) {
        return round;
      }
      if (attempt.reason != Reason.HELD_ELSEWHERE && failed == null) {
        failed = round;
      }
      if (i == permits - 1
          || engine.barQuorum(
              attempt.vote.tally(),
              status -> status != NodeOutcome.Status.OK && status != NodeOutcome.Status.REFUSED)
          || (bounded && engine.ticker.read() - giveUpAt >= 0)) {
        return failed != null ? failed : round;
      }
    }
  }

  private LockUnavailableException failure(Round<H> round, int rounds, long waitedNanos) {
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

  @Override
  public String toString() {
    return "Semaphore[" + name + ", " + resources.length + " permits]";
  }
}
