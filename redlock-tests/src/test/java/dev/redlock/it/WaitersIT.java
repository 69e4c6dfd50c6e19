package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockEvent;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.RedisFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The threads of one service waiting for one resource (issue 15 item 4): only the first in line
 * asks the nodes, a release by the service wakes the first at once, a new acquire goes behind those
 * already waiting, and a waiter that leaves (interrupted, closed) hands its place on. Retry pauses
 * are a minute long here, so a grant within seconds can only come from being woken.
 */
class WaitersIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  static final Duration TTL = Duration.ofSeconds(30);
  static final Duration MINUTE = Duration.ofSeconds(60);
  static final Duration WAKE_BOUND = Duration.ofSeconds(10);

  private final List<Thread> started = new CopyOnWriteArrayList<>();

  /** Attempts per thread (the ATTEMPT event runs on the attempting thread) and grants in order. */
  private final Map<String, Integer> attempts = new ConcurrentHashMap<>();

  private final List<String> grants = new CopyOnWriteArrayList<>();

  @AfterEach
  void stopThreads() throws InterruptedException {
    for (Thread t : started) {
      t.interrupt();
      t.join(WAKE_BOUND.toMillis());
    }
  }

  private RedlockConfig.Builder config(List<String> uris, Duration retryDelay) {
    return RedlockConfig.builder()
        .nodes(uris)
        .nodeTimeout(Duration.ofMillis(200))
        .retryDelay(retryDelay)
        .retryJitter(Duration.ZERO)
        .listener(
            e -> {
              String thread = Thread.currentThread().getName();
              if (e.kind() == LockEvent.Kind.ATTEMPT) {
                attempts.merge(thread, 1, Integer::sum);
              } else if (e.kind() == LockEvent.Kind.ACQUIRED) {
                grants.add(thread);
              }
            });
  }

  private int attemptsOf(String thread) {
    return attempts.getOrDefault(thread, 0);
  }

  /** Starts a thread that acquires {@code resource}, holds it for nothing, and releases it. */
  private Thread waiter(
      String name, Redlock redlock, String resource, Duration maxWait, AtomicReference<?> outcome) {
    @SuppressWarnings("unchecked")
    AtomicReference<Object> result = (AtomicReference<Object>) outcome;
    Thread t =
        new Thread(
            () -> {
              try (Lease lease = redlock.acquire(resource, TTL, maxWait)) {
                result.set(lease.isValid() ? "granted" : "invalid");
              } catch (Throwable e) {
                result.set(e);
              }
            },
            name);
    started.add(t);
    t.start();
    return t;
  }

  /**
   * Starts {@code name} and waits until it waits in line: parked by the lock service between
   * attempts (a thread that finds others in line joins them without an attempt of its own).
   */
  private Thread inLine(
      String name, Redlock redlock, String resource, Duration maxWait, AtomicReference<?> outcome) {
    Thread t = waiter(name, redlock, resource, maxWait, outcome);
    await().atMost(WAKE_BOUND).until(() -> waitingInLine(t));
    return t;
  }

  /** Parked in the service's wait between attempts (not, say, for a node's reply). */
  private static boolean waitingInLine(Thread t) {
    Object blocker = java.util.concurrent.locks.LockSupport.getBlocker(t);
    return blocker != null && blocker.getClass().getSimpleName().equals("Waiters");
  }

  @Test
  void aReleaseByThisServiceWakesItsFirstWaiterAtOnce() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock service = Redlock.create(config(nodes.uris(), MINUTE).build())) {
      Lease held = service.tryAcquire("waiters:wake", TTL).orElseThrow();
      AtomicReference<Object> outcome = new AtomicReference<>();
      inLine("w1", service, "waiters:wake", MINUTE.multipliedBy(2), outcome);
      held.release();
      // Its next pause ends a minute from now: granted within seconds only if the release woke it.
      await().atMost(WAKE_BOUND).until(() -> outcome.get() != null);
      assertEquals("granted", outcome.get());
      assertEquals(2, attemptsOf("w1"));
    }
  }

  @Test
  void aReleaseBetweenARefusedAttemptAndJoiningTheLineIsNotMissed() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    AtomicReference<Lease> toRelease = new AtomicReference<>();
    RedlockConfig.Builder builder =
        config(nodes.uris(), MINUTE)
            .listener(
                e -> {
                  // The waiter's attempt was just refused and it is not in line yet: release now.
                  Lease lease = toRelease.get();
                  if (e.kind() == LockEvent.Kind.FAILED
                      && Thread.currentThread().getName().equals("gap")
                      && lease != null
                      && toRelease.compareAndSet(lease, null)) {
                    lease.release();
                  }
                });
    try (Redlock service = Redlock.create(builder.build())) {
      toRelease.set(service.tryAcquire("waiters:gap", TTL).orElseThrow());
      AtomicReference<Object> outcome = new AtomicReference<>();
      waiter("gap", service, "waiters:gap", MINUTE.multipliedBy(2), outcome);
      // That release found no line to wake; a minute's pause unless the waiter learns of it.
      await().atMost(WAKE_BOUND).until(() -> outcome.get() != null);
      assertEquals("granted", outcome.get());
      assertEquals(2, attemptsOf("gap"));
    }
  }

  @Test
  void threadsOfOneServiceWaitingForOneResourceAskTheNodesAsOne() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock other = Redlock.create(config(nodes.uris(), MINUTE).build());
        Redlock service = Redlock.create(config(nodes.uris(), Duration.ofMillis(20)).build())) {
      Lease held = other.tryAcquire("waiters:one-asks", TTL).orElseThrow();
      List<AtomicReference<Object>> outcomes = new ArrayList<>();
      List<String> names = List.of("a1", "a2", "a3", "a4");
      for (String name : names) {
        AtomicReference<Object> outcome = new AtomicReference<>();
        outcomes.add(outcome);
        waiter(name, service, "waiters:one-asks", MINUTE, outcome);
      }
      // Held by another client, so nobody here is woken: the first in line polls every 20 ms.
      await().atMost(WAKE_BOUND).until(() -> names.stream().anyMatch(n -> attemptsOf(n) >= 15));
      long asking = names.stream().filter(n -> attemptsOf(n) > 1).count();
      assertEquals(1, asking, "threads that asked again, of 4 waiting: " + attempts);
      held.release();
      await().atMost(WAKE_BOUND).until(() -> outcomes.stream().allMatch(o -> o.get() != null));
      for (AtomicReference<Object> o : outcomes) {
        assertEquals("granted", o.get());
      }
    }
  }

  @Test
  void aNewAcquireGoesBehindThoseWaitingAndTheLineIsServedInOrder() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock service = Redlock.create(config(nodes.uris(), MINUTE).build())) {
      AtomicReference<Object> holderDone = new AtomicReference<>();
      java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
      Thread holder =
          new Thread(
              () -> {
                try {
                  Lease first = service.tryAcquire("waiters:order", TTL).orElseThrow();
                  release.await();
                  first.release();
                  // At once, as a job's loop does: it must not jump the three waiting.
                  try (Lease again =
                      service.acquire("waiters:order", TTL, MINUTE.multipliedBy(2))) {
                    holderDone.set(again.isValid() ? "granted" : "invalid");
                  }
                } catch (Throwable e) {
                  holderDone.set(e);
                }
              },
              "h0");
      started.add(holder);
      holder.start();
      await().atMost(WAKE_BOUND).until(() -> grants.contains("h0"));
      List<AtomicReference<Object>> outcomes = new ArrayList<>();
      for (String name : List.of("o1", "o2", "o3")) {
        AtomicReference<Object> outcome = new AtomicReference<>();
        outcomes.add(outcome);
        inLine(name, service, "waiters:order", MINUTE.multipliedBy(2), outcome);
      }
      release.countDown();
      await()
          .atMost(WAKE_BOUND)
          .until(
              () -> holderDone.get() != null && outcomes.stream().allMatch(o -> o.get() != null));
      assertEquals(List.of("h0", "o1", "o2", "o3", "h0"), grants);
      assertEquals("granted", holderDone.get());
    }
  }

  @Test
  void anInterruptedFirstWaiterHandsItsPlaceToTheNext() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock other = Redlock.create(config(nodes.uris(), MINUTE).build());
        Redlock service = Redlock.create(config(nodes.uris(), Duration.ofMillis(20)).build())) {
      // Held by another client: no release here will wake anyone, the first in line must poll.
      Lease held = other.tryAcquire("waiters:interrupt", TTL).orElseThrow();
      AtomicReference<Object> first = new AtomicReference<>();
      AtomicReference<Object> second = new AtomicReference<>();
      Thread t1 = inLine("i1", service, "waiters:interrupt", MINUTE.multipliedBy(2), first);
      inLine("i2", service, "waiters:interrupt", MINUTE.multipliedBy(2), second);
      await().atMost(WAKE_BOUND).until(() -> attemptsOf("i1") >= 3);
      assertEquals(0, attemptsOf("i2"), "behind i1, i2 must not ask: " + attempts);
      t1.interrupt();
      await().atMost(WAKE_BOUND).until(() -> first.get() != null);
      assertInstanceOf(InterruptedException.class, first.get());
      // i1's leaving made i2 first: it polls now (its wait runs two minutes otherwise).
      await().atMost(WAKE_BOUND).until(() -> attemptsOf("i2") >= 2);
      held.release();
      await().atMost(WAKE_BOUND).until(() -> second.get() != null);
      assertEquals("granted", second.get());
      assertTrue(!grants.contains("i1"), "grants: " + grants);
    }
  }

  @Test
  void aResourceNamedLikeASetsLabelDoesNotWaitInTheSetsLine() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock other = Redlock.create(config(nodes.uris(), MINUTE).build());
        Redlock service = Redlock.create(config(nodes.uris(), MINUTE).build())) {
      Lease heldA = other.tryAcquire("a", TTL).orElseThrow();
      AtomicReference<Object> setOutcome = new AtomicReference<>();
      Thread set =
          new Thread(
              () -> {
                try (Lease l =
                    service.acquireAll(java.util.Set.of("a", "b"), TTL, MINUTE.multipliedBy(2))) {
                  setOutcome.set(l.isValid() ? "granted" : "invalid");
                } catch (Throwable e) {
                  setOutcome.set(e);
                }
              },
              "set-waiter");
      started.add(set);
      set.start();
      await().atMost(WAKE_BOUND).until(() -> waitingInLine(set));
      // "[a, b]" is the set's label, and a free resource: in the set's line it would wait minutes.
      AtomicReference<Object> outcome = new AtomicReference<>();
      waiter("single", service, "[a, b]", MINUTE.multipliedBy(2), outcome);
      await().atMost(WAKE_BOUND).until(() -> outcome.get() != null);
      assertEquals("granted", outcome.get());
      heldA.release();
    }
  }

  @Test
  void closingTheServiceWakesEveryWaiter() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock other = Redlock.create(config(nodes.uris(), MINUTE).build())) {
      Lease held = other.tryAcquire("waiters:close", TTL).orElseThrow();
      Redlock service = Redlock.create(config(nodes.uris(), MINUTE).build());
      List<AtomicReference<Object>> outcomes = new ArrayList<>();
      for (String name : List.of("c1", "c2", "c3")) {
        AtomicReference<Object> outcome = new AtomicReference<>();
        outcomes.add(outcome);
        inLine(name, service, "waiters:close", MINUTE.multipliedBy(2), outcome);
      }
      service.close();
      await().atMost(WAKE_BOUND).until(() -> outcomes.stream().allMatch(o -> o.get() != null));
      for (AtomicReference<Object> o : outcomes) {
        assertInstanceOf(IllegalStateException.class, o.get());
      }
      assertTrue(held.isValid());
      held.release();
    }
  }

  /**
   * A semaphore's waiters stand in one line too (issue 17 item 2): with both permits held by this
   * service, a thread waiting for a permit is parked between rounds, and the release of either
   * permit wakes it at once (its own pause would end in a minute). Planted: the engine telling only
   * the permit resource's own line, not its semaphore's, leaves it waiting its minute.
   */
  @Test
  void aReleaseOfAPermitByThisServiceWakesTheSemaphoresFirstWaiter() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock service = Redlock.create(config(nodes.uris(), MINUTE).build())) {
      dev.redlock.Semaphore permits = service.semaphore("waiters:permits", 2);
      Lease first = permits.tryAcquire(TTL).orElseThrow();
      Lease second = permits.tryAcquire(TTL).orElseThrow();
      AtomicReference<Object> outcome = new AtomicReference<>();
      Thread t =
          new Thread(
              () -> {
                try (Lease permit = permits.acquire(TTL, MINUTE.multipliedBy(2))) {
                  outcome.set(permit.isValid() ? permit.resource() : "invalid");
                } catch (Throwable e) {
                  outcome.set(e);
                }
              },
              "permit-waiter");
      started.add(t);
      t.start();
      await().atMost(WAKE_BOUND).until(() -> waitingInLine(t));
      second.release();
      await().atMost(WAKE_BOUND).until(() -> outcome.get() != null);
      assertEquals(second.resource(), outcome.get(), "woken, and granted the released permit");
      first.release();
    }
  }

  /**
   * A thread waiting in a semaphore's line that is interrupted throws {@link InterruptedException}
   * at once and holds nothing: the permit freed afterwards is anyone's, and the line is gone.
   */
  @Test
  void anInterruptedSemaphoreWaiterThrowsAndTakesNothing() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock service = Redlock.create(config(nodes.uris(), MINUTE).build())) {
      dev.redlock.Semaphore permits = service.semaphore("waiters:permit-interrupted", 1);
      Lease held = permits.tryAcquire(TTL).orElseThrow();
      AtomicReference<Object> outcome = new AtomicReference<>();
      Thread t =
          new Thread(
              () -> {
                try (Lease permit = permits.acquire(TTL, MINUTE.multipliedBy(2))) {
                  outcome.set(permit);
                } catch (Throwable e) {
                  outcome.set(e);
                }
              },
              "permit-interrupted");
      started.add(t);
      t.start();
      await().atMost(WAKE_BOUND).until(() -> waitingInLine(t));
      t.interrupt();
      await().atMost(WAKE_BOUND).until(() -> outcome.get() != null);
      assertInstanceOf(InterruptedException.class, outcome.get());
      held.release();
      permits
          .tryAcquire(TTL)
          .orElseThrow(() -> new AssertionError("the interrupted waiter took the permit"))
          .release();
    }
  }

  /**
   * Readers share: of 3 threads of the service waiting to read behind its own writer, the writer's
   * release wakes the first, and each reader that gets in wakes the next at once, so all read
   * within seconds, not one per minute-long pause. Planted: no wake after a reader's win leaves the
   * second waiting its pause.
   */
  @Test
  void readersWaitingBehindAWriterAllGetInWhenItReleases() throws Exception {
    var nodes = redis.start(RedisFixture.nodes(3));
    try (Redlock service = Redlock.create(config(nodes.uris(), MINUTE).build())) {
      dev.redlock.ReadWriteLock rw = service.readWriteLock("waiters:readers");
      Lease write = rw.writeLock().tryAcquire(TTL).orElseThrow();
      List<AtomicReference<Object>> outcomes = new ArrayList<>();
      for (String name : List.of("r1", "r2", "r3")) {
        AtomicReference<Object> outcome = new AtomicReference<>();
        outcomes.add(outcome);
        Thread t =
            new Thread(
                () -> {
                  try (Lease read = rw.readLock().acquire(TTL, MINUTE.multipliedBy(2))) {
                    outcome.set(read.isValid() ? "granted" : "invalid");
                  } catch (Throwable e) {
                    outcome.set(e);
                  }
                },
                name);
        started.add(t);
        t.start();
        await().atMost(WAKE_BOUND).until(() -> waitingInLine(t));
      }
      write.release();
      await().atMost(WAKE_BOUND).until(() -> outcomes.stream().allMatch(o -> o.get() != null));
      for (AtomicReference<Object> o : outcomes) {
        assertEquals("granted", o.get());
      }
    }
  }
}
