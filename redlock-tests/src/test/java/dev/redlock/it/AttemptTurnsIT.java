package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockEvent;
import dev.redlock.Redlock;
import dev.redlock.RedlockException;
import dev.redlock.testkit.RedisFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code maxAttemptsInFlight} (issue 15): a service has at most that many attempts on the nodes at
 * once, and the others wait their turn <em>before</em> their attempt starts. Each test holds the
 * attempts in flight inside a listener, which runs on the attempt's thread once its turn has come
 * and before anything is sent, so what is in flight can be counted, and the callers waiting for a
 * turn are parked where nothing can move them on.
 *
 * <p>Planted (docs/testing.md): the engine not waiting for a turn fails {@link
 * #callersBeyondTheBoundWaitForATurnBeforeTheirAttemptStarts} with every caller in flight at once.
 */
class AttemptTurnsIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  static final Duration TTL = Duration.ofSeconds(10);
  static final Duration NO_HANG = Duration.ofSeconds(30);

  /** Holds every attempt at its start (its ATTEMPT event) until {@link #open} is counted down. */
  static final class Gatekeeper implements dev.redlock.RedlockListener {
    final List<String> started = new CopyOnWriteArrayList<>();
    final CountDownLatch open = new CountDownLatch(1);

    @Override
    public void onEvent(LockEvent event) {
      if (event.kind() == LockEvent.Kind.ATTEMPT) {
        started.add(event.resource());
        try {
          if (!open.await(NO_HANG.toMillis(), TimeUnit.MILLISECONDS)) {
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
  static dev.redlock.RedlockConfig.Builder config() {
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
    if (thread.getState() != Thread.State.WAITING) {
      return false;
    }
    for (StackTraceElement frame : thread.getStackTrace()) {
      if (frame.getClassName().equals("java.util.concurrent.Semaphore")) {
        return true;
      }
    }
    return false;
  }

  @Test
  void callersBeyondTheBoundWaitForATurnBeforeTheirAttemptStarts() throws Exception {
    Gatekeeper gate = new Gatekeeper();
    Redlock redlock = redis.client(config().maxAttemptsInFlight(2).listener(gate).build());
    List<Thread> callers = new ArrayList<>();
    List<Lease> won = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 5; i++) {
      String resource = "turns:" + i;
      callers.add(
          caller("caller-" + i, () -> redlock.tryAcquire(resource, TTL).ifPresent(won::add)));
    }
    // Two attempts start; the other three park for a turn, having sent nothing.
    await("2 attempts in flight and 3 callers parked for a turn")
        .atMost(NO_HANG)
        .until(
            () ->
                gate.started.size() == 2
                    && callers.stream().filter(AttemptTurnsIT::waitsForATurn).count() == 3);
    assertEquals(2, gate.started.size(), "attempts in flight with maxAttemptsInFlight 2");
    for (String resource : List.of("turns:0", "turns:1", "turns:2", "turns:3", "turns:4")) {
      if (!gate.started.contains(resource)) {
        assertEquals(0, redis.nodesWithKey(redis.config().build().keyPrefix() + resource));
      }
    }
    gate.open.countDown();
    for (Thread caller : callers) {
      caller.join(NO_HANG.toMillis());
    }
    assertEquals(5, gate.started.size(), "every caller had its turn");
    assertEquals(5, won.size(), "every caller won its free resource once its turn came");
    won.forEach(Lease::release);
  }

  @Test
  void aCallerInterruptedWhileWaitingForATurnStopsHavingSentNothing() throws Exception {
    Gatekeeper gate = new Gatekeeper();
    Redlock redlock = redis.client(config().maxAttemptsInFlight(1).listener(gate).build());
    AtomicReference<Optional<Lease>> first = new AtomicReference<>();
    AtomicReference<Throwable> holderFailure = new AtomicReference<>();
    Thread holder =
        caller(
            "holder",
            () -> {
              try {
                first.set(redlock.tryAcquire("turns:held", TTL));
              } catch (RuntimeException e) {
                holderFailure.set(e);
              }
            });
    await().atMost(NO_HANG).until(() -> gate.started.size() == 1);

    AtomicReference<Throwable> tryFailure = new AtomicReference<>();
    AtomicReference<Boolean> flagKept = new AtomicReference<>();
    Thread trying =
        caller(
            "trying",
            () -> {
              try {
                redlock.tryAcquire("turns:waiting", TTL);
              } catch (RuntimeException e) {
                tryFailure.set(e);
                flagKept.set(Thread.currentThread().isInterrupted());
              }
            });
    AtomicReference<Throwable> acquireFailure = new AtomicReference<>();
    Thread acquiring =
        caller(
            "acquiring",
            () -> {
              try {
                redlock.acquire("turns:waiting-too", TTL, Duration.ofSeconds(20));
              } catch (Exception e) {
                acquireFailure.set(e);
              }
            });
    await("both callers parked for the one turn")
        .atMost(NO_HANG)
        .until(() -> waitsForATurn(trying) && waitsForATurn(acquiring));
    trying.interrupt();
    acquiring.interrupt();
    trying.join(NO_HANG.toMillis());
    acquiring.join(NO_HANG.toMillis());

    assertTrue(tryFailure.get() instanceof RedlockException, "tryAcquire: " + tryFailure.get());
    assertTrue(
        tryFailure.get().getMessage().contains("nothing is held"), tryFailure.get().getMessage());
    assertEquals(Boolean.TRUE, flagKept.get(), "tryAcquire sets the interrupt flag again");
    assertTrue(
        acquireFailure.get() instanceof InterruptedException, "acquire: " + acquireFailure.get());
    assertEquals(List.of("turns:held"), gate.started, "the interrupted callers never started");
    String prefix = redis.config().build().keyPrefix();
    assertEquals(0, redis.nodesWithKey(prefix + "turns:waiting"));
    assertEquals(0, redis.nodesWithKey(prefix + "turns:waiting-too"));

    gate.open.countDown();
    holder.join(NO_HANG.toMillis());
    assertEquals(null, holderFailure.get(), "the attempt in flight");
    assertTrue(first.get().isPresent(), "the attempt in flight went on");
    first.get().get().release();
    // The interrupted callers gave no turn away and took none: the one turn is free again.
    Optional<Lease> again = redlock.tryAcquire("turns:waiting", TTL);
    assertTrue(again.isPresent(), "a new attempt has its turn");
    again.get().release();
  }
}
