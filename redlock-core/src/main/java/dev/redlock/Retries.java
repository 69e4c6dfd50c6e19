package dev.redlock;

import dev.redlock.spi.LeaseStore;

/**
 * One acquisition's attempts, and when it gives up, for the blocking {@code acquire} and the
 * asynchronous one. The first attempt waits for its turn as {@code tryAcquire} does; a later one
 * only until {@code maxWait} is spent, so turns never stretch the wait past {@code maxWait} plus
 * one attempt. A {@code maxWait} of centuries (or {@code ChronoUnit.FOREVER}) means no limit.
 */
final class Retries<H extends LeaseStore.Held> implements Waiters.Attempts {
  private final LeaseEngine<H> engine;
  private final Target target;
  private final long ttlMillis;
  private final long began;
  final boolean unbounded;
  final long giveUpAt;
  private int attempts;
  private Attempt<H> last;

  Retries(LeaseEngine<H> engine, Target target, long ttlMillis, long maxWaitNanos) {
    this.engine = engine;
    this.target = target;
    this.ttlMillis = ttlMillis;
    this.began = engine.ticker.read();
    this.unbounded = maxWaitNanos > Long.MAX_VALUE / 4;
    this.giveUpAt = began + (unbounded ? 0 : maxWaitNanos);
  }

  /**
   * The next attempt; null if it found no turn before {@code maxWait} was spent (nothing was sent:
   * {@link #failure()} is then the last attempt's). A refused writer's attempt keeps new readers
   * out until its next one.
   */
  Attempt<H> attempt() throws InterruptedException {
    Attempt<H> attempt =
        engine.attempt(
            target,
            ttlMillis,
            unbounded ? WriterIntent.UNTIL_NEXT_ASK : WriterIntent.UNTIL_NEXT_ASK_OR_GIVE_UP,
            last != null && !unbounded,
            giveUpAt);
    if (attempt != null) {
      attempts++;
      last = attempt;
    }
    return attempt;
  }

  @Override
  public Lease next() throws InterruptedException {
    Attempt<H> attempt = attempt();
    if (attempt == null
        || (attempt.lease == null && !unbounded && giveUpAt - engine.ticker.read() <= 0)) {
      throw failure();
    }
    return attempt.lease;
  }

  /** How long is left before giving up, from {@code now}; {@link Long#MAX_VALUE} if unbounded. */
  long leftAt(long now) {
    return unbounded ? Long.MAX_VALUE : giveUpAt - now;
  }

  /** Why the acquisition gave up: the last attempt's reason and account, and the time spent. */
  LockUnavailableException failure() {
    return last.failure(target.name(), attempts, engine.ticker.read() - began);
  }
}
