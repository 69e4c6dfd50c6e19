package dev.redlock;

import dev.redlock.config.TaskInterruption;
import dev.redlock.renewal.Renewal;
import dev.redlock.renewal.RenewedLease;
import dev.redlock.spi.LeaseStore;
import dev.redlock.spi.Tally;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Lease}, whatever store holds it: held, then released or lost, both final; its validity
 * only moves forward ({@link #extended}), by the votes it applies for its extends and its {@link
 * Renewal}'s renewals. Its monitor orders extend, renewal, loss, release and close, and is never
 * held while waiting on I/O.
 *
 * @param <H> what the store keeps about this lease
 */
final class ManagedLease<H extends LeaseStore.Held> implements Lease, RenewedLease {
  private static final Logger log = LoggerFactory.getLogger(ManagedLease.class);

  private final LeaseEngine<H> engine;
  private final H held;
  private final Target target; // as the engine asked for it, never as a store reports it
  private final long ttlMillis;
  private final long grantedAt;

  private volatile long validUntil;
  private volatile LeaseLostException lost;

  /** Set once the validity was seen to run out: a late reply never makes the lease valid again. */
  private volatile boolean expired;

  // Guarded by this:
  private ReentrantLock extendLock; // made by the first extend: most leases are never extended
  private long renewedFrom; // start of the latest successful acquisition or extend
  private boolean released;
  private Renewal renewal; // while kept alive: null before keepAlive and after release or loss
  private boolean deadlineWatched;
  private List<Consumer<? super LeaseLostException>> lossCallbacks; // made by the first onLost
  private Thread taskThread; // the withLock thread to interrupt on loss, while its task runs
  private Thread interruptedForLoss; // the thread the loss interrupted, if any
  private boolean lossTold; // the loss's callbacks run or are queued
  private boolean givenBack; // release() has had the store's answer
  private Thread runner; // the withLock thread, while its task runs

  ManagedLease(
      LeaseEngine<H> engine, H held, Target target, long ttlMillis, long start, long validUntil) {
    this.engine = engine;
    this.held = held;
    this.target = target;
    this.ttlMillis = ttlMillis;
    this.grantedAt = start;
    this.renewedFrom = start;
    this.validUntil = validUntil;
  }

  @Override
  public long fencingToken() {
    return held.fencingToken();
  }

  @Override
  public String resource() {
    return target.name();
  }

  @Override
  public List<String> resources() {
    return target.resources();
  }

  Target target() {
    return target;
  }

  @Override
  public List<NodeOutcome> nodeOutcomes() {
    return held.outcomes();
  }

  @Override
  public Duration remainingValidity() {
    long left = validUntil - engine.ticker.read();
    return isValid() ? Duration.ofNanos(Math.max(0, left)) : Duration.ZERO;
  }

  @Override
  public boolean isValid() {
    if (lost != null || expired) {
      return false;
    }
    if (validUntil - engine.ticker.read() > 0) {
      return true;
    }
    expired = true; // once false, false for good
    return false;
  }

  @Override
  public void checkValid() {
    checkNotReleased("");
    if (!isValid()) {
      throw lose(LeaseLostException.Reason.EXPIRED, List.of()); // never interrupts this thread
    }
  }

  @Override
  public boolean extend(Duration ttl) {
    return Renewal.extend(this, engine.renewals, engine.arguments.ttl(ttl));
  }

  @Override
  public synchronized void checkNotReleased(String advice) {
    if (released) {
      throw new IllegalStateException("lease on '" + resource() + "' was released" + advice);
    }
  }

  /** Serializes extends; not the monitor: a slow extend must not delay a loss's timer. */
  @Override
  public synchronized ReentrantLock extendLock() {
    if (extendLock == null) {
      extendLock = new ReentrantLock();
    }
    return extendLock;
  }

  @Override
  public Lease keepAlive() {
    checkNotReleased("");
    long interval = engine.arguments.renewable(Duration.ofMillis(ttlMillis));
    synchronized (this) {
      checkNotReleased("");
      if (renewal != null) {
        return this;
      }
      engine.ensureOpen(); // close stopped renewing: nothing may start it again
      if (!isValid()) {
        throw lose(LeaseLostException.Reason.EXPIRED, List.of());
      }
      renewal = new Renewal(this, engine.renewals, interval, grantedAt);
      renewal.start(renewedFrom);
      watchDeadline();
    }
    return this;
  }

  @Override
  public void onLost(Consumer<? super LeaseLostException> callback) {
    Objects.requireNonNull(callback, "callback must not be null");
    LeaseLostException already;
    synchronized (this) {
      if (released) {
        return; // a released lease is never lost
      }
      already = lost;
      if (already == null) {
        if (lossCallbacks == null) {
          lossCallbacks = new ArrayList<>(1);
        }
        lossCallbacks.add(callback);
        watchDeadline();
        return;
      }
    }
    notify(callback, already);
  }

  @Override
  public void release() {
    if (beginRelease()) {
      try {
        engine.release(this);
      } finally {
        synchronized (this) {
          givenBack = true; // close, waiting for the holder, may close the store now
          notifyAll();
        }
      }
    }
  }

  @Override
  public void close() {
    release();
  }

  /** Marks the lease released and stops its timers; false if it was released already. */
  synchronized boolean beginRelease() {
    if (released) {
      return false;
    }
    released = true;
    stopRenewing();
    taskThread = null;
    lossCallbacks = null;
    validUntil = engine.ticker.read(); // invalid from now on, whatever the nodes answer
    return true;
  }

  /**
   * At close: stops renewing. True if kept alive: a holder may still work under it, so close waits
   * for it. False if nobody keeps it alive (or it was lost): close gives it back.
   */
  synchronized boolean stopRenewingForClose() {
    if (released || lost != null || renewal == null || runner == Thread.currentThread()) {
      // (the last: close called by this lease's own task, which is done with it)
      return false;
    }
    stopRenewing();
    watchDeadline();
    return true;
  }

  /**
   * Waits until the holder has given the lease back or its loss has been told, and loses it if its
   * validity runs out first: the withLock task is interrupted, as on any loss, before another
   * client can win it. Told means queued for the callback threads, which close drains. A give-back
   * or a loss under way gets {@code graceNanos} more (a listener may block it). Waits through
   * interrupts, and sets the flag again after.
   */
  void awaitReleaseOrLoss(long graceNanos) {
    boolean interrupted = false;
    try {
      while (true) {
        synchronized (this) {
          while (!givenBack && !lossTold) {
            long now = engine.ticker.read();
            long left;
            if (released || lost != null) { // being given back or told on another thread
              if ((left = validUntil + graceNanos - now) <= 0) { // (release sets validUntil)
                return;
              }
            } else if ((left = validUntil - now) <= 0) {
              break;
            }
            try {
              TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
              interrupted = true; // the flag is clear now: the next wait waits
            }
          }
          if (givenBack || lossTold) {
            return;
          }
        }
        // Then waits again: a timer may have declared the loss first and be queueing its callbacks.
        loseOnLibraryThread(LeaseLostException.Reason.EXPIRED, List.of());
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void stopRenewing() { // under this monitor
    if (renewal != null) {
      renewal.stop();
      renewal = null;
    }
  }

  @Override
  public long validUntil() {
    return validUntil;
  }

  @Override
  public synchronized long renewedFrom() {
    return renewedFrom;
  }

  @Override
  public Tally renew(long millis) throws InterruptedException {
    return engine.store.renew(held, millis);
  }

  @Override
  public boolean renewAsync(long millis, Consumer<Tally> then) {
    return engine.store.renewAsync(held, millis, then);
  }

  @Override
  public boolean applyVotes(Tally votes, long start, long millis, boolean onLibraryThread) {
    return engine.applyVotes(this, votes, start, millis, onLibraryThread);
  }

  /**
   * Applies a successful extend or renewal that started at {@code start}; false if the lease ended
   * or its validity ran out meanwhile. The validity only moves forward: a store never shortens a
   * lease, so the latest validity a quorum confirmed holds, whatever order the replies come in.
   */
  synchronized boolean extended(long start, long newValidUntil) {
    if (released || !isValid()) {
      return false; // a lease whose validity ran out stays out, whatever a late reply says
    }
    if (newValidUntil - validUntil > 0) {
      validUntil = newValidUntil;
      renewedFrom = start;
    }
    return true;
  }

  /** Makes sure a timer signals the loss when the validity runs out (renewal watches maxHold). */
  private void watchDeadline() { // under this monitor
    if (!deadlineWatched) {
      deadlineWatched = true;
      engine.watchdog.at(validUntil, this::checkDeadline);
    }
  }

  /** At the deadline: loses the lease if its time is really up, else waits for the new one. */
  private void checkDeadline() {
    synchronized (this) {
      if (released || lost != null) {
        return;
      }
      if (engine.ticker.read() - validUntil < 0) { // extended meanwhile: wait for the new one
        engine.watchdog.at(validUntil, this::checkDeadline);
        return;
      }
    }
    loseOnLibraryThread(LeaseLostException.Reason.EXPIRED, List.of());
  }

  /**
   * Declares the lease lost, once, on the caller's thread: renewal stops, callbacks run, the
   * withLock thread is interrupted. Returns the loss (the first one, if it was lost already).
   */
  LeaseLostException lose(LeaseLostException.Reason reason, List<NodeOutcome> outcomes) {
    return lose(reason, outcomes, false);
  }

  /**
   * Declares the lease lost from a library thread (a timer, a renewal): the interrupt at once, the
   * callbacks and the event on a callback thread, so a slow callback holds up no other lease.
   */
  @Override
  public void loseOnLibraryThread(LeaseLostException.Reason reason, List<NodeOutcome> outcomes) {
    lose(reason, outcomes, true);
  }

  private LeaseLostException lose(
      LeaseLostException.Reason reason, List<NodeOutcome> outcomes, boolean onLibraryThread) {
    List<Consumer<? super LeaseLostException>> callbacks;
    LeaseLostException loss;
    boolean wasRenewing;
    synchronized (this) {
      if (lost != null) {
        return lost;
      }
      wasRenewing = renewal != null;
      loss =
          LeaseLostException.of(
              resource(),
              reason,
              outcomes,
              engine.store.quorum(),
              engine.settings.maxHold(),
              engine.isClosed());
      if (released) {
        return loss; // nothing to signal: the holder gave it back
      }
      lost = loss;
      if (!onLibraryThread) {
        lossTold = true; // this thread tells it, whoever closes meanwhile
        notifyAll();
      }
      stopRenewing();
      callbacks = lossCallbacks == null ? List.of() : List.copyOf(lossCallbacks);
      lossCallbacks = null;
    }
    if (wasRenewing || !callbacks.isEmpty()) {
      log.warn(loss.getMessage());
    } else {
      log.debug(loss.getMessage());
    }
    Runnable tell =
        () -> {
          engine.events.lease(
              LockEvent.Kind.LOST, this, 0, 0, 0, reason.name(), loss::nodeOutcomes);
          callbacks.forEach(callback -> notify(callback, loss));
        };
    if (onLibraryThread) {
      interruptTask(); // at once: callbacks that block must never keep a task running
      engine.watchdog.callback(tell);
      synchronized (this) {
        lossTold = true; // queued: close, waiting for this, drains the callback threads after
        notifyAll();
      }
    } else {
      // Callbacks first, so they have seen the loss before the task sees the interrupt; never
      // the calling thread itself: it learns of the loss by the exception (checkValid).
      tell.run();
      synchronized (this) {
        if (taskThread == Thread.currentThread()) {
          taskThread = null;
        }
      }
      interruptTask();
    }
    return loss;
  }

  private synchronized void interruptTask() {
    if (taskThread != null) {
      // Under the monitor: never after the task has finished. An interrupt already set is not
      // ours, and not recorded: not ours to clear.
      if (!taskThread.isInterrupted()) {
        taskThread.interrupt();
        interruptedForLoss = taskThread;
      }
      taskThread = null;
    }
  }

  private void notify(Consumer<? super LeaseLostException> callback, LeaseLostException loss) {
    try {
      callback.accept(loss);
    } catch (RuntimeException e) {
      log.error("an onLost callback for '{}' threw; other callbacks still run", resource(), e);
    }
  }

  /**
   * withLock's task starts on this thread, renewed: a loss interrupts it if so configured. Throws
   * the loss if the lease was lost since it was kept alive: the task never starts on a lost lease.
   */
  synchronized void taskStarts(Thread me) {
    if (lost != null) {
      throw lost;
    }
    runner = me;
    if (engine.settings.taskInterruption() == TaskInterruption.ON_LEASE_LOSS) {
      taskThread = released ? null : me;
    }
  }

  /** withLock's task ended: a loss no longer interrupts it. True if a loss had interrupted it. */
  synchronized boolean taskEnds(Thread me) {
    runner = null;
    taskThread = null;
    return interruptedForLoss == me;
  }

  LeaseLostException lossOrNull() {
    return lost;
  }

  H held() {
    return held;
  }

  @Override
  public long ttlMillis() {
    return ttlMillis;
  }

  @Override
  public String toString() {
    // Never the token: it is the only proof of ownership.
    return "Lease{resource='"
        + resource()
        + "', remainingValidity="
        + remainingValidity()
        + (lost != null ? ", lost=" + lost.reason() : "")
        + "}";
  }
}
