package dev.redlock.spring;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.RedlockException;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.TaskInterruption;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.BridgeMethodResolver;
import org.springframework.expression.BeanResolver;
import org.springframework.util.StringValueResolver;

/**
 * The advice around a {@link Locked} method: it only turns the annotation into a call of the {@link
 * Redlock} ({@code withLock}) and applies the not-acquired policy. With {@code lockAtLeastFor} the
 * lease is acquired, kept alive and released no sooner than that after the grant ({@link
 * DelayedReleases}).
 */
final class LockedInterceptor implements MethodInterceptor {
  private static final Logger log = LoggerFactory.getLogger(Locked.class);

  private final Map<Method, LockedMethod> methods = new ConcurrentHashMap<>();
  private final Supplier<Redlock> locks;
  private final Supplier<DelayedReleases> releases;
  private final StringValueResolver placeholders;
  private final BeanResolver beans;
  private volatile Duration maxTtl; // null until the start-up check

  LockedInterceptor(
      Supplier<Redlock> locks,
      Supplier<DelayedReleases> releases,
      StringValueResolver placeholders,
      BeanResolver beans) {
    this.locks = locks;
    this.releases = releases;
    this.placeholders = placeholders;
    this.beans = beans;
  }

  /**
   * Reads and checks {@code method}'s annotation now (when its bean is created), and against the
   * Redlock's {@code maxTtl} if the start-up check has run: a lazy bean is made after it.
   *
   * @throws RedlockSettingsException naming the method, the attribute and the rule
   */
  void register(Method method) {
    LockedMethod locked = lockedMethod(method);
    Duration max = maxTtl;
    if (locked != null && max != null) {
      check(locked, max);
    }
  }

  /**
   * Fails if a method registered so far has a ttl that {@code config} refuses on every call (above
   * its {@code maxTtl}), and checks every method registered later as it comes.
   *
   * @throws RedlockSettingsException naming the method, the attribute and the rule
   */
  void checkAgainst(RedlockConfig config) {
    maxTtl = config.maxTtl();
    for (LockedMethod locked : methods.values()) {
      if (locked != null) {
        check(locked, config.maxTtl());
      }
    }
  }

  private static void check(LockedMethod locked, Duration maxTtl) {
    if (locked.ttl.compareTo(maxTtl) > 0) {
      throw new RedlockSettingsException(
          "@Locked(ttl) on "
              + locked.name
              + " must be <= maxTtl ("
              + maxTtl
              + "), was "
              + locked.ttl
              + ": every call would be refused",
          "Shorten the ttl (long jobs renew a short one), or raise redlock.max-ttl on every"
              + " client of these nodes.",
          null);
    }
  }

  private LockedMethod lockedMethod(Method method) {
    return methods.computeIfAbsent(method, m -> LockedMethod.of(m, placeholders));
  }

  @Override
  public Object invoke(MethodInvocation invocation) throws Throwable {
    Object target = invocation.getThis();
    Method method = invocation.getMethod();
    if (target != null) {
      method = AopUtils.getMostSpecificMethod(method, AopUtils.getTargetClass(target));
    }
    LockedMethod locked = lockedMethod(BridgeMethodResolver.findBridgedMethod(method));
    if (locked == null) {
      return invocation.proceed();
    }
    String resource = locked.resource(target, invocation.getArguments(), beans);
    return locked.lockAtLeastFor.isZero()
        ? withLock(locked, resource, invocation)
        : atLeast(locked, resource, invocation);
  }

  private Object withLock(LockedMethod locked, String resource, MethodInvocation invocation)
      throws Throwable {
    AtomicBoolean started = new AtomicBoolean();
    try {
      return locks
          .get()
          .withLock(
              resource,
              locked.ttl,
              locked.maxWait,
              lease -> {
                started.set(true);
                return run(invocation, lease);
              });
    } catch (LockUnavailableException e) {
      if (started.get()) {
        throw e; // the method's own, from a lock it took itself
      }
      return notAcquired(locked, resource, e);
    } catch (InterruptedException e) {
      if (started.get()) {
        throw e;
      }
      throw interruptedWaiting(locked, resource, e);
    } catch (Carrier e) {
      throw e.getCause();
    }
  }

  /**
   * {@code withLock}'s contract (renewed while the method runs, the thread interrupted on a loss
   * unless {@link TaskInterruption#NEVER}, the loss attached to what the method throws), with a
   * release no sooner than {@code lockAtLeastFor} after the grant.
   */
  private Object atLeast(LockedMethod locked, String resource, MethodInvocation invocation)
      throws Throwable {
    Redlock redlock = locks.get();
    Lease lease;
    try {
      lease = redlock.acquire(resource, locked.ttl, locked.maxWait);
    } catch (LockUnavailableException e) {
      return notAcquired(locked, resource, e);
    } catch (InterruptedException e) {
      throw interruptedWaiting(locked, resource, e);
    }
    long granted = System.nanoTime();
    try {
      lease.keepAlive();
    } catch (RuntimeException e) { // a ttl too short to renew: the method never runs
      lease.release();
      throw e;
    }
    LossInterrupt interrupt = new LossInterrupt(Thread.currentThread());
    Throwable thrown = null;
    try {
      if (redlock.config().taskInterruption() == TaskInterruption.ON_LEASE_LOSS) {
        lease.onLost(loss -> interrupt.lost());
      }
      return run(invocation, lease);
    } catch (Throwable e) {
      thrown = e;
      if (!lease.isValid()) {
        try {
          lease.checkValid();
        } catch (LeaseLostException loss) {
          if (loss != e) {
            e.addSuppressed(loss);
          }
        } catch (IllegalStateException released) {
          // released already: nothing to attach
        }
      }
      throw e instanceof Carrier ? e.getCause() : e;
    } finally {
      if (interrupt.end() && thrown != null) {
        Thread.interrupted(); // the loss's interrupt stopped the method; what it threw says so
      }
      releases.get().releaseAt(lease, granted + locked.lockAtLeastFor.toNanos());
    }
  }

  private static Object run(MethodInvocation invocation, Lease lease) throws Exception {
    Lease previous = CurrentLease.enter(lease);
    try {
      return invocation.proceed();
    } catch (Exception | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new Carrier(t); // neither an Exception nor an Error: carried through withLock
    } finally {
      CurrentLease.exit(previous);
    }
  }

  private Object notAcquired(LockedMethod locked, String resource, LockUnavailableException e) {
    if (!locked.skip) {
      throw NotRun.mark(e, locked.name);
    }
    if (e.reason() == LockUnavailableException.Reason.HELD_ELSEWHERE) {
      log.debug("{} skipped: '{}' is held elsewhere", locked.name, resource);
    } else {
      log.warn(
          "{} skipped: the lock on '{}' was not acquired: {}",
          locked.name,
          resource,
          e.getMessage());
    }
    return locked.skippedResult();
  }

  private static RedlockException interruptedWaiting(
      LockedMethod locked, String resource, InterruptedException e) {
    Thread.currentThread().interrupt(); // never swallowed: the caller's thread stays interrupted
    return new RedlockException(
        locked.name + " did not run: interrupted while waiting for the lock on '" + resource + "'",
        e);
  }

  /** Carries a throwable that is neither an Exception nor an Error through {@code withLock}. */
  private static final class Carrier extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Carrier(Throwable cause) {
      super(cause);
    }
  }

  /** Interrupts the method's thread on a loss while the method runs, and only then. */
  private static final class LossInterrupt {
    private final Thread runner;
    private boolean running = true;
    private boolean interrupted;

    LossInterrupt(Thread runner) {
      this.runner = runner;
    }

    synchronized void lost() {
      if (running) {
        interrupted = true;
        runner.interrupt();
      }
    }

    /** Ends the window; whether the loss interrupted the thread. */
    synchronized boolean end() {
      running = false;
      return interrupted;
    }
  }
}
