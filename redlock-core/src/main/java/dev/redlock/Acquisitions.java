package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.config.TaskInterruption;
import dev.redlock.internal.Names;
import dev.redlock.spi.LeaseRequest.Shape;
import dev.redlock.spi.LeaseStore;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * How a caller gets a lease from the engine's attempts ({@link LeaseEngine#attempt}): one attempt,
 * attempts in this service's waiting line until won or {@code maxWait} is spent, the task run while
 * the lease is renewed, and the same without a waiting thread ({@code *Async}).
 *
 * @param <H> what the store keeps about a granted lease
 */
final class Acquisitions<H extends LeaseStore.Held> {
  private final LeaseEngine<H> engine;

  Acquisitions(LeaseEngine<H> engine) {
    this.engine = engine;
  }

  Optional<Lease> tryAcquire(String resource, Duration ttl) {
    long ttlMillis = request(resource, ttl);
    return tryOnce(Target.one(resource), ttlMillis);
  }

  /** One attempt, mapped for the caller: the lease, empty if held elsewhere, else the failure. */
  Optional<Lease> tryOnce(Target target, long ttlMillis) {
    Attempt<H> attempt;
    try {
      attempt = engine.attempt(target, ttlMillis, WriterIntent.NONE, false, 0);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw Attempt.interrupted(target.describe(), e);
    }
    if (attempt.lease != null) {
      return Optional.of(attempt.lease);
    }
    if (attempt.reason == Reason.HELD_ELSEWHERE) {
      return Optional.empty();
    }
    throw attempt.failure(target.name(), 1, 0);
  }

  Lease acquire(String resource, Duration ttl, Duration maxWait) throws InterruptedException {
    long ttlMillis = request(resource, ttl);
    return acquire(Target.one(resource), ttlMillis, maxWait);
  }

  Optional<Lease> tryAcquireAll(Set<String> resources, Duration ttl) {
    List<String> sorted = requestAll(resources);
    return tryOnce(Target.all(sorted), engine.arguments.ttl(ttl));
  }

  Lease acquireAll(Set<String> resources, Duration ttl, Duration maxWait)
      throws InterruptedException {
    List<String> sorted = requestAll(resources);
    return acquire(Target.all(sorted), engine.arguments.ttl(ttl), maxWait);
  }

  /** Attempts until won or {@code maxWait} is spent, in this service's waiting line. */
  Lease acquire(Target target, long ttlMillis, Duration maxWait) throws InterruptedException {
    Retries<H> tries = new Retries<>(engine, target, ttlMillis, Arguments.maxWaitNanos(maxWait));
    return engine.waiters.inLine(
        target.line(),
        target.shape() == Shape.READ,
        tries.unbounded,
        tries.giveUpAt,
        engine,
        tries);
  }

  <T, E extends Exception> T withLock(
      String resource, Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException {
    checkRenewable(task, ttl);
    return runRenewed(acquire(resource, ttl, maxWait), task);
  }

  <T, E extends Exception> T withLockAll(
      Set<String> resources, Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException {
    Objects.requireNonNull(task, "task must not be null");
    requestAll(resources);
    engine.arguments.renewable(ttl);
    return runRenewed(acquireAll(resources, ttl, maxWait), task);
  }

  /** Checks a withLock before acquiring: a lease that could not be renewed is never taken. */
  void checkRenewable(Object task, Duration ttl) {
    Objects.requireNonNull(task, "task must not be null");
    engine.ensureOpen();
    engine.arguments.renewable(ttl);
  }

  /**
   * withLock's part once the lease is won: renewed while {@code task} runs, released after; a loss
   * interrupts the task (if so configured) and is attached to what it throws.
   */
  static <T, E extends Exception> T runRenewed(Lease won, LeaseTask<T, E> task) throws E {
    ManagedLease<?> lease = (ManagedLease<?>) won;
    Thread me = Thread.currentThread();
    boolean threw = false;
    try {
      lease.keepAlive();
      lease.taskStarts(me);
      return task.run(lease);
    } catch (Exception | Error e) {
      threw = true;
      LeaseLostException loss = lease.lossOrNull();
      if (loss != null && loss != e) {
        e.addSuppressed(loss);
      }
      throw e;
    } finally {
      if (lease.taskEnds(me) && threw) {
        Thread.interrupted(); // the loss's, and what withLock throws carries the loss
      }
      lease.release();
    }
  }

  CompletableFuture<Optional<Lease>> tryAcquireAsync(String resource, Duration ttl) {
    long ttlMillis = request(resource, ttl);
    return AsyncAcquisition.tryOnce(engine, resource, ttlMillis);
  }

  CompletableFuture<Lease> acquireAsync(String resource, Duration ttl, Duration maxWait) {
    long ttlMillis = request(resource, ttl);
    return AsyncAcquisition.acquire(engine, resource, ttlMillis, Arguments.maxWaitNanos(maxWait));
  }

  <T> CompletableFuture<T> withLockAsync(
      String resource,
      Duration ttl,
      Duration maxWait,
      Function<? super Lease, ? extends CompletionStage<T>> task) {
    checkRenewable(task, ttl);
    return AsyncLock.run(
        acquireAsync(resource, ttl, maxWait),
        task,
        engine.settings.taskInterruption() == TaskInterruption.ON_LEASE_LOSS,
        engine.watchdog::completion,
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

  ReadWriteLock readWriteLock(String name) {
    engine.ensureOpen();
    Names.checkReadWriteName(name, engine.store::checkResource);
    if (!engine.store.hasReadWriteLocks()) {
      throw new UnsupportedOperationException(
          "this lease store ("
              + engine.store.getClass().getSimpleName()
              + ") has no read-write locks");
    }
    return new ReadWriteSides<>(this, engine, name);
  }
}
