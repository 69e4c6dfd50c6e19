package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.internal.Names;
import dev.redlock.spi.LeaseRequest.Shape;
import dev.redlock.spi.LeaseStore;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * How a caller gets a lease: one attempt ({@code tryAcquire}), or attempts until won or {@code
 * maxWait} is spent, in this service's waiting line ({@code acquire}), with the task run while the
 * lease is renewed ({@code withLock}); the same without a waiting thread ({@code *Async}); of one
 * resource, a set, or a side of a read-write lock. Each attempt and its verdict is the engine's
 * ({@link LeaseEngine#attempt}); what lies between attempts is here.
 *
 * @param <H> what the store keeps about a granted lease
 */
final class Acquisitions<H extends LeaseStore.Held> {
  private final LeaseEngine<H> engine;

  Acquisitions(LeaseEngine<H> engine) {
    this.engine = engine;
  }

  public Optional<Lease> tryAcquire(String resource, Duration ttl) {
    long ttlMillis = request(resource, ttl);
    return tryOnce(Target.one(resource), ttlMillis);
  }

  /** One attempt, mapped for the caller: the lease, empty if held elsewhere, else the failure. */
  Optional<Lease> tryOnce(Target target, long ttlMillis) {
    Attempt<H> attempt;
    try {
      // One attempt (no intent mark), after its turn however long the attempts ahead take.
      attempt = engine.attempt(target, ttlMillis, WriterIntent.NONE, false, 0);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RedlockException(
          "interrupted while acquiring "
              + target.describe()
              + "; nothing is held (what was sent is rolled back)",
          e);
    }
    if (attempt.lease != null) {
      return Optional.of(attempt.lease);
    }
    if (attempt.reason == Reason.HELD_ELSEWHERE) {
      return Optional.empty();
    }
    throw attempt.failure(target.name(), 1, 0);
  }

  public Lease acquire(String resource, Duration ttl, Duration maxWait)
      throws InterruptedException {
    long ttlMillis = request(resource, ttl);
    return acquire(Target.one(resource), ttlMillis, maxWait);
  }

  public Optional<Lease> tryAcquireAll(Set<String> resources, Duration ttl) {
    List<String> sorted = requestAll(resources);
    long ttlMillis = engine.checkTtl(ttl);
    return tryOnce(Target.all(sorted), ttlMillis);
  }

  public Lease acquireAll(Set<String> resources, Duration ttl, Duration maxWait)
      throws InterruptedException {
    List<String> sorted = requestAll(resources);
    long ttlMillis = engine.checkTtl(ttl);
    return acquire(Target.all(sorted), ttlMillis, maxWait);
  }

  public <T, E extends Exception> T withLockAll(
      Set<String> resources, Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException {
    Objects.requireNonNull(task, "task must not be null");
    engine.ensureOpen();
    requestAll(resources);
    engine.checkRenewable(
        ttl); // before acquiring: a lease we could not renew must not be taken at all
    @SuppressWarnings("unchecked") // acquireAll only ever returns this engine's leases
    ManagedLease<H> lease = (ManagedLease<H>) acquireAll(resources, ttl, maxWait);
    return engine.runRenewed(lease, task);
  }

  /** Attempts until won or {@code maxWait} is spent. */
  Lease acquire(Target target, long ttlMillis, Duration maxWait) throws InterruptedException {
    Objects.requireNonNull(maxWait, "maxWait must not be null");
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("maxWait must be >= 0, was " + maxWait);
    }
    Retries<H> tries = new Retries<>(engine, target, ttlMillis, Arguments.saturatedNanos(maxWait));
    // Behind this service's threads already waiting for it (no barging), else in line only once
    // an attempt is refused: the uncontended path never touches the line.
    Object waitingFor = target.line();
    Waiters.Line line =
        engine.waiters().anyWaiting(waitingFor) ? engine.waiters().join(waitingFor) : null;
    boolean won = false;
    try {
      for (; ; ) {
        if (line != null) {
          engine.waiters().awaitTurn(line, tries.unbounded, tries.giveUpAt, engine);
        }
        long releasesSeen = engine.waiters().releases();
        Attempt<H> attempt = tries.attempt();
        if (attempt == null || (attempt.lease == null && tries.timeIsUp())) {
          throw tries.failure();
        }
        if (attempt.lease != null) {
          won = true;
          return attempt.lease;
        }
        if (line == null) {
          line = engine.waiters().join(waitingFor);
          engine.waiters().releasedSince(line, releasesSeen); // a release before the line existed
        }
      }
    } finally {
      if (line != null) {
        engine.waiters().leave(waitingFor, line, won);
        if (won && target.shape() == Shape.READ) {
          // Readers share: one that got in means the lock reads now, so the next reader in line
          // asks at once rather than after its pause (and wakes the next in turn when it wins).
          engine.waiters().released(waitingFor, 0, false);
        }
      }
    }
  }

  public <T, E extends Exception> T withLock(
      String resource, Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException {
    Objects.requireNonNull(task, "task must not be null");
    engine.ensureOpen();
    engine.checkRenewable(
        ttl); // before acquiring: a lease we could not renew must not be taken at all
    @SuppressWarnings("unchecked") // acquire only ever returns this engine's leases
    ManagedLease<H> lease = (ManagedLease<H>) acquire(resource, ttl, maxWait);
    return engine.runRenewed(lease, task);
  }

  public java.util.concurrent.CompletableFuture<Optional<Lease>> tryAcquireAsync(
      String resource, Duration ttl) {
    long ttlMillis = request(resource, ttl);
    return AsyncAcquisition.tryOnce(engine, resource, ttlMillis);
  }

  public java.util.concurrent.CompletableFuture<Lease> acquireAsync(
      String resource, Duration ttl, Duration maxWait) {
    long ttlMillis = request(resource, ttl);
    Objects.requireNonNull(maxWait, "maxWait must not be null");
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("maxWait must be >= 0, was " + maxWait);
    }
    return AsyncAcquisition.acquire(engine, resource, ttlMillis, Arguments.saturatedNanos(maxWait));
  }

  public <T> java.util.concurrent.CompletableFuture<T> withLockAsync(
      String resource,
      Duration ttl,
      Duration maxWait,
      java.util.function.Function<? super Lease, ? extends java.util.concurrent.CompletionStage<T>>
          task) {
    Objects.requireNonNull(task, "task must not be null");
    engine.ensureOpen();
    engine.checkRenewable(
        ttl); // before acquiring: a lease we could not renew must not be taken at all
    return AsyncLock.run(
        acquireAsync(resource, ttl, maxWait),
        task,
        engine.settings().taskInterruption() == TaskInterruption.ON_LEASE_LOSS,
        engine.completions(),
        engine::isClosed);
  }

  /** Checks an acquisition of one resource; returns its ttl in milliseconds. */
  private long request(String resource, Duration ttl) {
    engine.ensureOpen();
    return engine.arguments.one(resource, ttl);
  }

  /** Checks an acquisition of a set; returns the resources distinct and sorted. */
  private List<String> requestAll(Set<String> resources) {
    engine.ensureOpen();
    return engine.arguments.sorted(resources);
  }

  public ReadWriteLock readWriteLock(String name) {
    engine.ensureOpen();
    Names.checkReadWriteName(name, engine.store()::checkResource);
    if (!engine.store().hasReadWriteLocks()) {
      throw new UnsupportedOperationException(
          "this lease store ("
              + engine.store().getClass().getSimpleName()
              + ") has no read-write locks");
    }
    return new ReadWriteSides<>(this, engine, name);
  }
}
