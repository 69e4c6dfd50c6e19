package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockEvent;
import dev.redlock.Redlock;
import dev.redlock.RedlockException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Who waits for a turn, and for how long: callers beyond the bound, interrupted callers, listeners
 * that attempt or close, {@code acquire}'s maxWait, releases and extends ({@link AttemptTurns}: the
 * gate and the nodes).
 *
 * <p>Planted (docs/testing.md): the engine not waiting for a turn fails {@link
 * #callersBeyondTheBoundWaitForATurnBeforeTheirAttemptStarts} with every caller in flight at once.
 */
class AttemptTurnsIT extends AttemptTurns {
  @Test
  void callersBeyondTheBoundWaitForATurnBeforeTheirAttemptStarts() throws Exception {
    Gatekeeper gate = new Gatekeeper();
    Redlock redlock = redis.client(config().maxAttemptsInFlight(2).listener(gate).build());
    List<Thread> callers = new ArrayList<>();
    List<Lease> won = new CopyOnWriteArrayList<>();
    for (int i = 0; i < 2; i++) {
      String resource = "turns:" + i;
      callers.add(
          caller("caller-" + i, () -> redlock.tryAcquire(resource, TTL).ifPresent(won::add)));
    }
    await("2 attempts in flight").atMost(NO_HANG).until(() -> gate.started.size() == 2);
    // Every shape waits for the same turns: a set, a permit, a read side.
    callers.add(
        caller(
            "caller-set",
            () ->
                redlock
                    .tryAcquireAll(java.util.Set.of("turns:set-a", "turns:set-b"), TTL)
                    .ifPresent(won::add)));
    callers.add(
        caller(
            "caller-permit",
            () -> redlock.semaphore("turns:sem", 2).tryAcquire(TTL).ifPresent(won::add)));
    callers.add(
        caller(
            "caller-read",
            () ->
                redlock.readWriteLock("turns:rw").readLock().tryAcquire(TTL).ifPresent(won::add)));
    // The other three park for a turn, having sent nothing.
    await("2 attempts in flight and 3 callers parked for a turn")
        .atMost(NO_HANG)
        .until(() -> callers.stream().filter(AttemptTurnsIT::waitsForATurn).count() == 3);
    assertEquals(List.of("turns:0", "turns:1"), gate.started.stream().sorted().toList());
    String prefix = redis.config().build().keyPrefix();
    for (String parked :
        List.of("turns:set-a", "turns:set-b", "turns:sem@permit:0", "turns:sem@permit:1")) {
      assertEquals(0, redis.nodesWithKey(prefix + parked), "a parked caller wrote " + parked);
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
    // The interrupted callers gave no turn away and took none: the one turn is free again (a
    // turn they kept would park this attempt: bounded, so that it fails rather than hangs).
    Optional<Lease> again =
        assertTimeoutPreemptively(NO_HANG, () -> redlock.tryAcquire("turns:waiting", TTL));
    assertTrue(again.isPresent(), "a new attempt has its turn");
    again.get().release();
  }

  /**
   * A listener's ATTEMPT event that calls {@code tryAcquire} on the same service, with one turn:
   * the nested attempt runs in the turn its thread has (waiting for a second turn would wait for
   * itself forever). Planted (docs/testing.md): no re-entry → both attempts hang and the bounded
   * wait fails.
   */
  @Test
  void anAttemptMadeFromAListenerInsideAnAttemptRunsInItsTurn() throws Exception {
    List<Lease> nested = new CopyOnWriteArrayList<>();
    AtomicReference<Redlock> self = new AtomicReference<>();
    Redlock redlock =
        redis.client(
            config()
                .maxAttemptsInFlight(1)
                .listener(
                    event -> {
                      if (event.kind() == LockEvent.Kind.ATTEMPT
                          && event.resource().equals("turns:outer")) {
                        self.get().tryAcquire("turns:nested", TTL).ifPresent(nested::add);
                      }
                    })
                .build());
    self.set(redlock);
    Optional<Lease> outer =
        assertTimeoutPreemptively(NO_HANG, () -> redlock.tryAcquire("turns:outer", TTL));
    assertTrue(outer.isPresent(), "the outer attempt");
    assertEquals(1, nested.size(), "the nested attempt");
    nested.get(0).release();
    outer.get().release();
    // Both turns' bookkeeping is back: the one turn is free.
    Optional<Lease> after =
        assertTimeoutPreemptively(NO_HANG, () -> redlock.tryAcquire("turns:after", TTL));
    assertTrue(after.isPresent());
    after.get().release();
  }

  /**
   * {@code close()} called from a listener's ATTEMPT event, with one turn (its own) and a caller
   * parked for it, does not wait for turns nobody can give back: it returns at once rather than at
   * its bound (5 × nodeTimeout + 1 s, here 61 s). Planted (docs/testing.md): close asking for its
   * zero turns behind the parked caller → it waits out the bound, and the 30 s wait here fails.
   */
  @Test
  void closeFromAnAttemptListenerDoesNotWaitForItsOwnTurn() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch parked = new CountDownLatch(1);
    AtomicReference<Boolean> closed = new AtomicReference<>();
    AtomicReference<Redlock> self = new AtomicReference<>();
    Redlock redlock =
        redis.client(
            config()
                .nodeTimeout(Duration.ofSeconds(12))
                .maxAttemptsInFlight(1)
                .listener(
                    event -> {
                      if (event.kind() == LockEvent.Kind.ATTEMPT
                          && event.resource().equals("turns:closer")) {
                        inside.countDown();
                        try {
                          if (parked.await(NO_HANG.toMillis(), TimeUnit.MILLISECONDS)) {
                            self.get().close();
                            closed.set(true);
                          }
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                      }
                    })
                .build());
    self.set(redlock);
    Thread closer =
        caller(
            "closer",
            () -> {
              try {
                redlock.tryAcquire("turns:closer", Duration.ofSeconds(20));
              } catch (RuntimeException e) {
                // closed under its own attempt (its vote is not sent): not what this test checks
              }
            });
    assertTrue(inside.await(NO_HANG.toMillis(), TimeUnit.MILLISECONDS), "the closer has the turn");
    Thread waiting =
        caller(
            "waiting",
            () -> {
              try {
                redlock.tryAcquire("turns:parked", Duration.ofSeconds(20));
              } catch (IllegalStateException e) {
                // closed: expected
              }
            });
    await("a caller parked for the one turn").atMost(NO_HANG).until(() -> waitsForATurn(waiting));
    parked.countDown();
    await("close returned from inside the attempt")
        .atMost(NO_HANG)
        .until(() -> Boolean.TRUE.equals(closed.get()));
    closer.join(NO_HANG.toMillis());
    waiting.join(NO_HANG.toMillis());
    assertFalse(waiting.isAlive(), "the parked caller found the service closed");
  }

  /**
   * {@code acquire} keeps its maxWait when the turns are taken: its first attempt (refused: the
   * lock is held elsewhere) had its turn, then the one turn is held by another caller's attempt;
   * the next attempt waits for a turn only until maxWait is spent, and {@code acquire} gives up
   * with the refusal while that attempt is still held; {@code acquireAsync}'s future too. Planted
   * (docs/testing.md): later attempts waiting for their turn without a bound → {@code acquire} ends
   * only when the gate opens (blocking or async, each its own planted run).
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void acquireGivesUpAtMaxWaitWhileEveryTurnIsTaken(boolean async) throws Exception {
    Gatekeeper gate = new Gatekeeper("turns:blocker");
    Redlock redlock = redis.client(config().maxAttemptsInFlight(1).listener(gate).build());
    Redlock other = redis.client(config().build());
    Lease elsewhere = other.acquire("turns:busy", TTL, NO_HANG);
    Duration maxWait = Duration.ofSeconds(5);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    long[] began = new long[1];
    Thread acquiring =
        caller(
            "acquiring",
            () -> {
              try {
                began[0] = System.nanoTime();
                if (async) {
                  redlock.acquireAsync("turns:busy", TTL, maxWait).toCompletableFuture().join();
                } else {
                  redlock.acquire("turns:busy", TTL, maxWait);
                }
              } catch (java.util.concurrent.CompletionException e) {
                failure.set(e.getCause());
              } catch (Exception e) {
                failure.set(e);
              }
            });
    await("the first attempt had its turn").atMost(NO_HANG).until(() -> gate.started.size() >= 1);
    Thread blocker = caller("blocker", () -> redlock.tryAcquire("turns:blocker", TTL));
    await("the blocker holds the one turn")
        .atMost(NO_HANG)
        .until(() -> gate.started.contains("turns:blocker"));
    assertTrue(
        gate.startedAt.get("turns:blocker") - began[0] < maxWait.toNanos(),
        "the blocker took the turn before acquire's maxWait was spent (else this run shows nothing)");
    acquiring.join(NO_HANG.toMillis());
    assertFalse(acquiring.isAlive(), "acquire must return while the turn is still held");
    assertTrue(
        failure.get() instanceof dev.redlock.LockUnavailableException, "acquire: " + failure.get());
    assertEquals(
        dev.redlock.LockUnavailableException.Reason.HELD_ELSEWHERE,
        ((dev.redlock.LockUnavailableException) failure.get()).reason());
    gate.open.countDown();
    blocker.join(NO_HANG.toMillis());
    elsewhere.release();
  }

  /**
   * Releases and extends never wait for a turn: with the one turn held by an attempt, a lease taken
   * before is extended and released. Planted (docs/testing.md): a turn taken for a release → the
   * release waits for the gate and the bounded wait fails.
   */
  @Test
  void extendsAndReleasesDoNotWaitForATurn() throws Exception {
    Gatekeeper gate = new Gatekeeper("turns:blocker");
    Redlock redlock = redis.client(config().maxAttemptsInFlight(1).listener(gate).build());
    Lease mine = redlock.acquire("turns:mine", TTL, NO_HANG);
    Thread blocker = caller("blocker", () -> redlock.tryAcquire("turns:blocker", TTL));
    await().atMost(NO_HANG).until(() -> gate.started.contains("turns:blocker"));
    assertTrue(assertTimeoutPreemptively(NO_HANG, () -> mine.extend(TTL.multipliedBy(2))));
    assertTimeoutPreemptively(NO_HANG, mine::release);
    assertEquals(1, gate.open.getCount(), "done while the turn was held");
    // release() returns once a quorum confirmed; the last node's delete may still be on its way.
    String key = redis.config().build().keyPrefix() + "turns:mine";
    await("deleted on every node").atMost(NO_HANG).until(() -> redis.nodesWithKey(key) == 0);
    assertEquals(1, gate.open.getCount(), "deleted everywhere while the turn was held");
    gate.open.countDown();
    blocker.join(NO_HANG.toMillis());
  }

  /**
   * The wait for a turn costs no validity: a caller parked for the one turn longer than its whole
   * ttl is still granted once the turn comes, with validity left. Planted (docs/testing.md): the
   * attempt's clock started before the turn → the attempt is judged too late (VALIDITY_EXPIRED) and
   * fails.
   */
  @Test
  void aWaitForATurnCostsNoValidity() throws Exception {
    Gatekeeper gate = new Gatekeeper("turns:long");
    Redlock redlock = redis.client(config().maxAttemptsInFlight(1).listener(gate).build());
    Duration ttl = Duration.ofSeconds(3);
    Thread blocker = caller("blocker", () -> redlock.tryAcquire("turns:long", TTL));
    await().atMost(NO_HANG).until(() -> gate.started.contains("turns:long"));
    AtomicReference<Object> outcome = new AtomicReference<>();
    AtomicReference<Boolean> validAtGrant = new AtomicReference<>();
    Thread waiting =
        caller(
            "waiting",
            () -> {
              try {
                Optional<Lease> lease = redlock.tryAcquire("turns:patient", ttl);
                validAtGrant.set(lease.isPresent() && lease.get().isValid());
                outcome.set(lease);
              } catch (RuntimeException e) {
                outcome.set(e);
              }
            });
    // Held for a turn longer than its ttl (the fault this test injects), and still parked then.
    await("parked past its ttl")
        .pollDelay(ttl.plusMillis(500))
        .atMost(NO_HANG)
        .until(() -> waitsForATurn(waiting));
    gate.open.countDown();
    waiting.join(NO_HANG.toMillis());
    blocker.join(NO_HANG.toMillis());
    assertTrue(
        outcome.get() instanceof Optional<?> o && o.isPresent(), "granted: " + outcome.get());
    assertEquals(
        Boolean.TRUE, validAtGrant.get(), "validity left after a wait longer than the ttl");
    ((Lease) ((Optional<?>) outcome.get()).get()).release();
  }
}
