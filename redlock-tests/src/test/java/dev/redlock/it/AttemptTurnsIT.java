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
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

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
    assertEquals(0, redis.nodesWithKey(redis.config().build().keyPrefix() + "turns:mine"));
    gate.open.countDown();
    blocker.join(NO_HANG.toMillis());
  }

  /**
   * {@code close()} while an attempt is in flight waits for its verdict (bounded, and through an
   * interrupt of the closing thread, whose flag stays set): the attempt wins on the nodes, finds
   * the service closed, gives back what it won and throws, and nothing is left on the nodes.
   * Planted (docs/testing.md): close not taking the turns, or giving up its wait at an interrupt →
   * the store is closed under the attempt, which fails for another reason.
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void closeWaitsForTheAttemptInFlightWhichGivesBackWhatItWon(boolean interruptedCloser)
      throws Exception {
    // A resource of each run's own: the other run's give-back cannot be mistaken for this one's.
    String resource = "turns:closing:" + interruptedCloser;
    Gatekeeper gate = new Gatekeeper(resource);
    Redlock redlock = redis.client(config().maxAttemptsInFlight(1).listener(gate).build());
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    Thread attempting = attemptOnAClosingService(redlock, resource, outcome);
    await().atMost(NO_HANG).until(() -> gate.started.contains(resource));
    AtomicReference<Boolean> flagAfterClose = new AtomicReference<>();
    Thread closing =
        caller(
            "closing",
            () -> {
              if (interruptedCloser) {
                Thread.currentThread().interrupt();
              }
              redlock.close();
              flagAfterClose.set(Thread.currentThread().isInterrupted());
            });
    // Closing has begun: parked for the turns (or, were it not to wait, already done).
    await("close waits for the turn in flight")
        .atMost(NO_HANG)
        .until(() -> waitsForATurnTimed(closing) || !closing.isAlive());
    gate.open.countDown();
    attempting.join(NO_HANG.toMillis());
    closing.join(NO_HANG.toMillis());
    assertWonAndGivenBack(outcome.get());
    // Given back on every node (close waits for that), and in any case long before the ttl: a key
    // nobody released would still be there. Seen once on a fresh machine: 1 node of 3 with it.
    await("what the attempt in flight won was given back")
        .atMost(TTL.dividedBy(2))
        .until(() -> redis.nodesWithKey(redis.config().build().keyPrefix() + resource) == 0);
    assertEquals(interruptedCloser, flagAfterClose.get(), "the closer's interrupt flag");
  }

  /**
   * The case above that failed once on a fresh machine, made to happen: the closer is interrupted,
   * and one node is frozen while the attempt votes, so the attempt wins on the other two and its
   * release there is chained behind the {@code SET} the frozen node has not answered. The give-back
   * waits for that node too, and close's wait for the I/O threads goes on through the interrupt;
   * the node thaws once the other two have released, runs the {@code SET}, then the release, and no
   * node keeps the key. Planted (docs/testing.md): both waits as before (a give-back on a quorum,
   * and an interrupted close stopping the I/O threads at once) → the thawed node runs the {@code
   * SET} alone and keeps the key for its ttl.
   */
  @Test
  void anInterruptedCloseLeavesNothingOnASlowNodeOfAnAttemptInFlight() throws Exception {
    String resource = "turns:closing-slow";
    Gatekeeper gate = new Gatekeeper(resource);
    Redlock redlock = redis.client(config().maxAttemptsInFlight(1).listener(gate).build());
    redlock.tryAcquire("turns:warm-up", TTL).orElseThrow().release(); // connections made
    AtomicReference<Throwable> outcome = new AtomicReference<>();
    Thread attempting = attemptOnAClosingService(redlock, resource, outcome);
    await().atMost(NO_HANG).until(() -> gate.started.contains(resource));
    Thread closing = interruptedCloser(redlock);
    await("close waits for the turn in flight")
        .atMost(NO_HANG)
        .until(() -> waitsForATurnTimed(closing));
    RedisNode slow = redis.nodes().node(2);
    slow.pause();
    try {
      gate.open.countDown();
      awaitReleasedOnTheLiveTwo(resource);
    } finally {
      slow.resume();
    }
    attempting.join(NO_HANG.toMillis());
    closing.join(NO_HANG.toMillis());
    assertWonAndGivenBack(outcome.get());
    awaitOnNoNode(resource);
  }

  /**
   * A lease held when an interrupted thread closes the service, taken while one node was frozen:
   * its release there is chained behind the {@code SET} that node has not answered. close() gives
   * it back through the interrupt (bounded) and waits for the I/O threads; the node thaws once the
   * other two have released, and no node keeps the key. Planted (docs/testing.md): close's
   * give-back and its wait for the I/O threads stopping at the interrupt, as before → the key stays
   * there.
   */
  @Test
  void anInterruptedCloseGivesBackOnASlowNodeToo() throws Exception {
    String resource = "turns:held-slow";
    Redlock redlock = redis.client(config().build());
    redlock.tryAcquire("turns:warm-up-held", TTL).orElseThrow().release(); // connections made
    RedisNode slow = redis.nodes().node(2);
    slow.pause();
    try {
      redlock.tryAcquire(resource, TTL).orElseThrow(); // won on the two live nodes
      Thread closing = interruptedCloser(redlock);
      awaitReleasedOnTheLiveTwo(resource);
      slow.resume();
      closing.join(NO_HANG.toMillis());
      assertFalse(closing.isAlive(), "close returned");
    } finally {
      slow.resume();
    }
    awaitOnNoNode(resource);
  }

  /** A thread whose {@code tryAcquire} of {@code resource} puts what it got in {@code outcome}. */
  static Thread attemptOnAClosingService(
      Redlock redlock, String resource, AtomicReference<Throwable> outcome) {
    return caller(
        "attempting",
        () -> {
          try {
            outcome.set(
                new AssertionError(
                    "granted on a closing service: " + redlock.tryAcquire(resource, TTL)));
          } catch (RuntimeException e) {
            outcome.set(e);
          }
        });
  }

  /** The attempt in flight won while the service closed, gave it back, and threw. */
  static void assertWonAndGivenBack(Throwable outcome) {
    assertTrue(
        outcome instanceof IllegalStateException
            && outcome.getMessage().contains("while the attempt was won (given back)"),
        "the attempt in flight: " + outcome);
  }

  /** A thread that closes {@code redlock} with its interrupt flag set. */
  static Thread interruptedCloser(Redlock redlock) {
    return caller(
        "closing",
        () -> {
          Thread.currentThread().interrupt();
          redlock.close();
        });
  }

  /**
   * Until the first two nodes ran our {@code SET} and then our release: the resource's fencing
   * counter is there (the acquire script writes it), the key is not.
   */
  static void awaitReleasedOnTheLiveTwo(String resource) {
    String key = redis.config().build().keyPrefix() + resource;
    await("the SET and then the release ran on the two live nodes")
        .atMost(NO_HANG)
        .until(
            () ->
                redis.nodes().all().subList(0, 2).stream()
                    .allMatch(
                        node -> {
                          try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 2000)) {
                            return !jedis.exists(key) && jedis.exists(key + "@fence");
                          }
                        }));
  }

  /** Until no node holds the resource, within half its ttl: a key nobody releases stays longer. */
  static void awaitOnNoNode(String resource) {
    String key = redis.config().build().keyPrefix() + resource;
    await("no node keeps " + resource)
        .atMost(TTL.dividedBy(2))
        .until(() -> redis.nodesWithKey(key) == 0);
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
