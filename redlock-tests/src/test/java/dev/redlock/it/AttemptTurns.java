package dev.redlock.it;

import dev.redlock.LockEvent;
import dev.redlock.testkit.RedisFixture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code maxAttemptsInFlight}: a service has at most that many attempts on the nodes at once, and
 * the others wait their turn <em>before</em> their attempt starts ({@link AttemptTurnsIT}; {@link
 * CloseInFlightIT} for {@code close()} with an attempt in flight). Each test holds the attempts in
 * flight inside a listener, which runs on the attempt's thread once its turn has come and before
 * anything is sent, so what is in flight can be counted, and the callers waiting for a turn are
 * parked where nothing can move them on.
 */
abstract class AttemptTurns {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  static final Duration TTL = Duration.ofSeconds(10);
  static final Duration NO_HANG = Duration.ofSeconds(30);

  /**
   * Holds every attempt (or those of one resource) at its start (its ATTEMPT event) until {@link
   * #open} is counted down.
   */
  static final class Gatekeeper implements dev.redlock.RedlockListener {
    final List<String> started = new CopyOnWriteArrayList<>();
    final java.util.Map<String, Long> startedAt = new java.util.concurrent.ConcurrentHashMap<>();
    final CountDownLatch open = new CountDownLatch(1);
    final String only;

    Gatekeeper() {
      this(null);
    }

    /** Holds only the attempts on {@code only}; the others are counted and go on. */
    Gatekeeper(String only) {
      this.only = only;
    }

    @Override
    public void onEvent(LockEvent event) {
      if (event.kind() == LockEvent.Kind.ATTEMPT) {
        startedAt.putIfAbsent(event.resource(), System.nanoTime());
        started.add(event.resource());
        if (only != null && !only.equals(event.resource())) {
          return;
        }
        try {
          // Longer than any bound a test waits with, so a test that waits for something held up
          // behind the gate fails before the gate gives up on it.
          if (!open.await(NO_HANG.multipliedBy(3).toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("the test never let the attempts go on");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /**
   * What is tested is who waits, not how fast the nodes answer: a timeout no busy machine reaches,
   * so that every attempt that has its turn is won.
   */
  static dev.redlock.config.RedlockConfig.Builder config() {
    return redis.config().nodeTimeout(Duration.ofSeconds(2));
  }

  static Thread caller(String name, Runnable body) {
    Thread thread = new Thread(body, name);
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  /** Parked for a turn: waiting, with the engine's wait for one on its stack. */
  static boolean waitsForATurn(Thread thread) {
    return parkedOnTurns(thread, Thread.State.WAITING);
  }

  /** Parked, with a bound, for turns (close takes every turn with a bound). */
  static boolean waitsForATurnTimed(Thread thread) {
    return parkedOnTurns(thread, Thread.State.TIMED_WAITING);
  }

  static boolean parkedOnTurns(Thread thread, Thread.State state) {
    if (thread.getState() != state) {
      return false;
    }
    for (StackTraceElement frame : thread.getStackTrace()) {
      if (frame.getClassName().equals("java.util.concurrent.Semaphore")) {
        return true;
      }
    }
    return false;
  }
}
