package dev.redlock.testkit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.LockEvent;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.ReadWriteLock;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.RedlockListener;
import dev.redlock.Semaphore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * What every lease store must do, whatever keeps the leases: the semantics the Redis quorum and the
 * SQL table share, spoken through the public API only ({@link Redlock}, {@link Lease}, {@link
 * LockEvent}s, the exceptions). A store's suite extends this and says how to make a client, how
 * long a short ttl is, how to cut the store off and back, and what its per-node account names.
 *
 * <pre>{@code
 * class PostgresLeasesIT extends LeaseContract {
 *   protected Redlock createClient(Consumer<RedlockConfig.Builder> settings) {
 *     RedlockConfig.Builder b = RedlockConfig.builder()
 *         .store(JdbcLeases.store(dataSource, table))
 *         .nodeTimeout(Duration.ofSeconds(1));
 *     settings.accept(b);
 *     return Redlock.create(b.build());
 *   }
 *   ...
 * }
 * }</pre>
 *
 * <p>Bounds and ttls are written for an ordinary machine and scaled by {@link #TIMING}: on a slow
 * one, run with {@code -Dredlock.test.timing=3} (see {@link Timing}). Stores scale their own ttls
 * and timeouts with it too.
 */
public abstract class LeaseContract {
  /** This run's timing ({@link Timing#get()}): scale the store's ttls and timeouts with it. */
  protected static final Timing TIMING = Timing.get();

  /** Bound for "returns instead of hanging": {@link Timing#noHang()}. */
  protected static final Duration NO_HANG = TIMING.noHang();

  /** A ttl no test outlives: 10 s, scaled, at most the default {@code maxTtl}. */
  private static final Duration LONG_TTL = atMostMaxTtl(TIMING.scaled(Duration.ofSeconds(10)));

  private final List<Redlock> clients = new ArrayList<>();
  private final List<AutoCloseable> afterClients = new ArrayList<>();

  /**
   * A new client of the store under test (each test may make several), with the settings the store
   * usually runs the contract with, changed by {@code settings} (a test adds a listener, say)
   * before they are built. The store's own settings come first, so the test's win. Their {@code
   * maxTtl} must be at least the default ({@link RedlockConfig#DEFAULT_MAX_TTL}): the tests'
   * longest ttls are capped there.
   */
  protected abstract Redlock createClient(Consumer<RedlockConfig.Builder> settings);

  /**
   * A ttl short enough to wait out in a test, long enough to renew (a few timeouts), scaled by
   * {@link #TIMING}. Tests also give leases 6 times this ttl, so it must be at most a sixth of the
   * clients' {@code maxTtl}.
   */
  protected abstract Duration shortTtl();

  /** Makes the store unreachable for the clients (as if it stopped), until {@link #reconnect}. */
  protected abstract void disconnect();

  /** Ends {@link #disconnect()}. Called after every test, so it must be harmless when connected. */
  protected abstract void reconnect();

  /**
   * What a failure's and an event's per-node account names, in its order: {@link
   * NodeOutcome#node()} of each part of the store a client asks (Redis: each node's URI; a SQL
   * table: one entry).
   */
  protected abstract List<String> nodeNames();

  /**
   * Waits (bounded) until the store keeps nothing of {@code resource}, once every lease of it has
   * been released: nothing for a later owner to trip on, no key left to expire. The contract also
   * checks, through the API, that a new client is granted the resource at once; a store that can
   * look at its own data checks it here (Redis: no node has the key; SQL: no row). The default
   * checks nothing more.
   */
  protected void awaitNothingKept(String resource) {}

  /**
   * How many parts of the store hold a live lease of {@code resource} right now (Redis: running
   * nodes with its key; a SQL table: 1 for an unexpired row, else 0), read from the store itself,
   * not through the API; -1 (the default) if the store cannot be looked at. The multi-resource
   * tests use it to see that a refused set left nothing behind anywhere.
   */
  protected long placesHolding(String resource) {
    return -1;
  }

  /** The resource names of this run: distinct per test, so stores need no cleaning between. */
  protected String resource(String name) {
    return "contract:" + getClass().getSimpleName() + ":" + name;
  }

  /**
   * Registers what a client stands on (a connection pool, say), to be closed after every client of
   * the test has been closed, so their releases still get through. Returns {@code resource}.
   */
  protected final <T extends AutoCloseable> T closeAfterClients(T resource) {
    afterClients.add(resource);
    return resource;
  }

  /** A new client with the store's usual settings, closed after the test. */
  protected final Redlock client() {
    return client(settings -> {});
  }

  /** A new client whose settings {@code settings} changed (see {@link #createClient}). */
  protected final Redlock client(Consumer<RedlockConfig.Builder> settings) {
    Redlock client = createClient(settings);
    clients.add(client);
    return client;
  }

  @AfterEach
  void closeClients() throws Exception {
    reconnect();
    clients.forEach(Redlock::close);
    clients.clear();
    for (AutoCloseable resource : afterClients) {
      resource.close();
    }
    afterClients.clear();
  }

  private static Duration atMostMaxTtl(Duration ttl) {
    return ttl.compareTo(RedlockConfig.DEFAULT_MAX_TTL) < 0 ? ttl : RedlockConfig.DEFAULT_MAX_TTL;
  }

  /** Waits until {@code lease} has run out, on its own clock (bounded by {@link #NO_HANG}). */
  private static void waitOut(Lease lease) {
    await("the lease runs out")
        .atMost(NO_HANG)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> !lease.isValid());
  }

  /**
   * Checks {@code check} every 50 ms for {@code span} and fails at the first look that sees it
   * false: an invariant over a window, not a wait (an Awaitility {@code during} would start its
   * window again after a false look).
   */
  private static void assertThroughout(Duration span, String what, BooleanSupplier check) {
    long until = System.nanoTime() + span.toNanos();
    do {
      assertTrue(check.getAsBoolean(), what);
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    } while (System.nanoTime() - until < 0);
    assertTrue(check.getAsBoolean(), what);
  }

  /**
   * Has {@code client} acquire and release 40 resources named after {@code prefix} with {@code
   * ttl}, on 4 threads at once (10 each, every acquire and the whole waiting at most {@link
   * #NO_HANG}): what a busy client does before it is closed.
   */
  protected static void acquireAndReleaseOnFourThreads(Redlock client, String prefix, Duration ttl)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> work = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        work.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 10; i++) {
                    client.acquire(prefix + ":" + thread + ":" + i, ttl, NO_HANG).release();
                  }
                  return null;
                }));
      }
      for (Future<?> f : work) {
        f.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** Whether {@code other} is refused {@code r} now (a lease it got is released at once). */
  private static boolean refused(Redlock other, String r) {
    Optional<Lease> taken = other.tryAcquire(r, LONG_TTL);
    taken.ifPresent(Lease::release);
    return taken.isEmpty();
  }

  // ---- one holder at a time ----------------------------------------------------------------

  @Test
  void oneHolderAtATimeAndTheNextAfterRelease() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("exclusive");
    Lease held = a.acquire(r, LONG_TTL, NO_HANG);
    assertTrue(held.isValid());
    assertTrue(b.tryAcquire(r, LONG_TTL).isEmpty(), "a second client cannot acquire while held");
    assertTrue(a.tryAcquire(r, LONG_TTL).isEmpty(), "not reentrant: the same client cannot either");
    held.release();
    Lease next =
        b.tryAcquire(r, LONG_TTL)
            .orElseThrow(() -> new AssertionError("free again as soon as release returns"));
    assertTrue(next.fencingToken() > held.fencingToken(), "fencing tokens grow");
    next.release();
  }

  @Test
  void aLeaseNamesItsResourceAndKeepsMostOfItsTtl() throws Exception {
    Redlock a = client();
    String r = resource("happy");
    Lease lease = a.acquire(r, LONG_TTL, NO_HANG);
    assertEquals(r, lease.resource());
    assertTrue(lease.isValid());
    assertTrue(
        lease.remainingValidity().compareTo(LONG_TTL) < 0,
        "validity is ttl minus elapsed and drift: " + lease.remainingValidity());
    assertTrue(
        lease.remainingValidity().compareTo(LONG_TTL.minus(TIMING.scaled(Duration.ofSeconds(1))))
            > 0,
        "a healthy store leaves most of the ttl: " + lease.remainingValidity());
    lease.release();
    assertFalse(lease.isValid());
  }

  @Test
  void acquireGivesUpAfterMaxWaitWhenHeldElsewhere() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("busy");
    try (Lease held = a.acquire(r, LONG_TTL, Duration.ZERO)) {
      LockUnavailableException e =
          assertTimeoutPreemptively(
              NO_HANG,
              () ->
                  assertThrows(
                      LockUnavailableException.class,
                      () -> b.acquire(r, LONG_TTL, TIMING.scaled(Duration.ofMillis(300)))));
      assertEquals(LockUnavailableException.Reason.HELD_ELSEWHERE, e.reason());
      assertEquals(r, e.resource());
      assertTrue(e.attempts() > 1, "it retried: " + e.attempts());
      assertEquals(nodeNames().size(), e.nodeOutcomes().size(), e.getMessage());
      assertTrue(
          e.getMessage().contains("held elsewhere") && e.getMessage().contains(nodeNames().get(0)),
          e.getMessage());
      assertTrue(held.isValid());
    }
  }

  @Test
  void twoRacingForOneResourceExactlyOneWins() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("race");
    // Warm both up first: the race is about the store's decision, not about connecting.
    a.acquire(resource("warm-a"), LONG_TTL, NO_HANG).release();
    b.acquire(resource("warm-b"), LONG_TTL, NO_HANG).release();
    CyclicBarrier start = new CyclicBarrier(2);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<Optional<Lease>>> tries = new ArrayList<>();
      for (Redlock s : List.of(a, b)) {
        tries.add(
            pool.submit(
                () -> {
                  start.await();
                  try {
                    return s.tryAcquire(r, LONG_TTL);
                  } catch (LockUnavailableException e) {
                    return Optional.<Lease>empty();
                  }
                }));
      }
      // Both answers first: releasing the winner before the other has answered would let it win.
      List<Lease> winners = new ArrayList<>();
      for (Future<Optional<Lease>> t : tries) {
        t.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS).ifPresent(winners::add);
      }
      int won = winners.size();
      winners.forEach(Lease::release);
      assertEquals(1, won, "exactly one of two racing clients wins");
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * 3 clients × 4 threads × 15 rounds on one resource: no two holders ever inside at once, every
   * lease valid inside, the fencing tokens growing in grant order, and nothing left kept after.
   */
  @Test
  void manyClientsAndThreadsNeverOverlap() throws Exception {
    int clientsCount = 3;
    int threadsPerClient = 4;
    int rounds = 15;
    OverlapDetector detector = new OverlapDetector();
    AtomicInteger grants = new AtomicInteger();
    List<Long> tokens = new ArrayList<>();
    String r = resource("contended");
    Duration maxWait = TIMING.scaled(Duration.ofSeconds(60));
    ExecutorService pool = Executors.newFixedThreadPool(clientsCount * threadsPerClient);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int c = 0; c < clientsCount; c++) {
        Redlock s = client();
        for (int t = 0; t < threadsPerClient; t++) {
          String who = "client" + c + "-thread" + t;
          workers.add(
              pool.submit(
                  () -> {
                    for (int i = 0; i < rounds; i++) {
                      try (Lease lease = s.acquire(r, LONG_TTL, maxWait)) {
                        detector.enter(r, who);
                        synchronized (tokens) {
                          tokens.add(lease.fencingToken());
                        }
                        grants.incrementAndGet();
                        assertTrue(lease.isValid());
                        detector.exit(r, who);
                      }
                    }
                    return null;
                  }));
        }
      }
      for (Future<?> f : workers) {
        f.get(TIMING.scaled(Duration.ofMinutes(2)).toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(List.of(), detector.violations());
    assertEquals(clientsCount * threadsPerClient * rounds, grants.get());
    for (int i = 1; i < tokens.size(); i++) {
      assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens in grant order: " + tokens);
    }
    assertFalse(refused(client(), r), "every lease was released");
    awaitNothingKept(r);
  }

  @Test
  void resourcesAreCaseSensitive() throws Exception {
    Redlock a = client();
    Lease upper = a.acquire(resource("Case"), LONG_TTL, NO_HANG);
    Lease lower =
        a.tryAcquire(resource("case"), LONG_TTL)
            .orElseThrow(() -> new AssertionError("'case' is not 'Case'"));
    assertTrue(upper.isValid() && lower.isValid(), "two resources, two leases");
    upper.release();
    lower.release();
  }

  // ---- expiry and ownership ----------------------------------------------------------------

  @Test
  void aHolderThatHangsLosesTheLockWhenItsTtlEnds() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("hang");
    Lease stalled = a.acquire(r, shortTtl(), NO_HANG);
    // A stops renewing and acting: after its ttl, B gets the lock.
    Lease next = assertTimeoutPreemptively(NO_HANG, () -> b.acquire(r, LONG_TTL, NO_HANG));
    assertFalse(stalled.isValid(), "B was granted only once A's lease had ended");
    assertTrue(next.fencingToken() > stalled.fencingToken());
    next.release();
  }

  @Test
  void anExpiredHolderCanNeitherReleaseNorExtendTheNextOwnersLock() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Redlock c = client();
    String r = resource("stale");
    Lease stale = a.acquire(r, shortTtl(), NO_HANG);
    waitOut(stale);
    Lease owner = b.acquire(r, LONG_TTL, NO_HANG);
    assertFalse(stale.extend(LONG_TTL), "an expired lease is never extended");
    stale.release(); // owner-checked: B's lock stays
    assertTrue(c.tryAcquire(r, LONG_TTL).isEmpty(), "B still holds it");
    assertTrue(owner.isValid());
    assertTrue(owner.extend(LONG_TTL), "the owner extends");
    owner.release();
  }

  /**
   * {@code extend} moves the validity forward, here and in the store (another client is still
   * refused once the first ttl has passed); a released lease cannot be extended.
   */
  @Test
  void extendMovesValidityForwardInTheStore() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("extended");
    Lease lease = a.tryAcquire(r, shortTtl()).orElseThrow();
    Duration longer = atMostMaxTtl(TIMING.scaled(Duration.ofSeconds(30)));
    assertTrue(lease.extend(longer));
    assertTrue(
        lease.remainingValidity().compareTo(longer.multipliedBy(2).dividedBy(3)) > 0,
        "validity was moved forward: " + lease.remainingValidity());
    assertThroughout(
        shortTtl().plus(TIMING.scaled(Duration.ofMillis(500))),
        "the store kept the extended lease past its first ttl",
        () -> refused(b, r));
    lease.release();
    assertThrows(
        IllegalStateException.class,
        () -> lease.extend(LONG_TTL),
        "a released lease cannot be extended");
  }

  /**
   * {@code extend(ttl)} with less than the lease has left shortens neither the lease nor the
   * store's copy: another client still cannot take the lock once that shorter ttl has passed.
   */
  @Test
  void anExtendShorterThanWhatIsLeftShortensNothing() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("shorter");
    Duration longTtl = shortTtl().multipliedBy(3);
    Lease lease = a.acquire(r, longTtl, NO_HANG);
    assertTrue(lease.extend(shortTtl()), "a quorum still holds the lease");
    assertTrue(
        lease.remainingValidity().compareTo(shortTtl().multipliedBy(2)) > 0,
        "the lease kept its longer validity: " + lease.remainingValidity());
    // Past the shorter ttl (and a margin for clocks), the store must still hold it.
    assertThroughout(
        shortTtl().plus(TIMING.scaled(Duration.ofMillis(500))),
        "the store shortened the lease: another client took it",
        () -> refused(b, r));
    assertTrue(lease.isValid());
    lease.release();
  }

  /**
   * A kept-alive lease given a short extend keeps its validity and its renewal schedule: before,
   * the extend's shorter validity replaced the renewal's, and the lease was lost before its next
   * renewal fell due. The lease's ttl is 6 short ttls (a renewal every 2), the extend 1: the window
   * outlasts the shorter validity and a renewal.
   */
  @Test
  void aKeptAliveLeaseSurvivesAShorterExtend() {
    Redlock a = client();
    Redlock b = client();
    String r = resource("kept-shorter");
    Lease lease = a.tryAcquire(r, shortTtl().multipliedBy(6)).orElseThrow().keepAlive();
    assertTrue(lease.extend(shortTtl()));
    assertThroughout(
        shortTtl().multipliedBy(5).dividedBy(2),
        "the kept-alive lease stays valid, and held in the store",
        () -> lease.isValid() && refused(b, r));
    lease.release();
  }

  /**
   * A kept-alive lease given an extend longer than its ttl renews at its own pace: before, renewals
   * were counted from the extend's start, fell due at once and ran in a tight loop.
   */
  @Test
  void aKeptAliveLeaseGivenALongerExtendRenewsAtItsPace() {
    AtomicInteger renewals = new AtomicInteger();
    Redlock a =
        client(
            settings ->
                settings.listener(
                    event -> {
                      if (event.kind() == LockEvent.Kind.EXTENDED) {
                        renewals.incrementAndGet();
                      }
                    }));
    Lease lease = a.tryAcquire(resource("kept-longer"), shortTtl()).orElseThrow().keepAlive();
    assertTrue(lease.extend(shortTtl().multipliedBy(5)));
    int before = renewals.get();
    Duration window = shortTtl().multipliedBy(2);
    assertThroughout(window, "the kept-alive lease stays valid", lease::isValid);
    int during = renewals.get() - before;
    lease.release();
    // One renewal every ttl × renewalFraction (a third): about 6 in 2 ttls. The loop made
    // thousands.
    assertTrue(during <= 20, during + " renewals in " + window);
  }

  // ---- withLock, renewal and loss ----------------------------------------------------------

  @Test
  void withLockRenewsWhileTheTaskRunsAndReleasesAfter() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("renewed");
    Duration ttl = shortTtl();
    String result =
        a.withLock(
            r,
            ttl,
            NO_HANG,
            lease -> {
              long until = System.nanoTime() + ttl.multipliedBy(3).toNanos();
              while (System.nanoTime() < until) {
                assertTrue(b.tryAcquire(r, LONG_TTL).isEmpty(), "still held");
                lease.checkValid();
                LockSupport.parkNanos(ttl.toNanos() / 4); // the task's own work
              }
              return "done";
            });
    assertEquals("done", result);
    Lease after =
        b.tryAcquire(r, LONG_TTL)
            .orElseThrow(() -> new AssertionError("withLock released when the task returned"));
    after.release();
  }

  @Test
  void aStoreCutOffMidTaskLosesTheLeaseAndTellsTheTask() throws Exception {
    Redlock a = client();
    String r = resource("lost");
    CompletableFuture<LeaseLostException> signalled = new CompletableFuture<>();
    Exception thrown =
        assertThrows(
            Exception.class,
            () ->
                a.withLock(
                    r,
                    shortTtl(),
                    NO_HANG,
                    lease -> {
                      lease.onLost(signalled::complete);
                      disconnect();
                      while (true) { // the job: it checks before each step
                        lease.checkValid();
                        // One step of work; the lease-loss interrupt cuts it short (parkNanos
                        // returns at once, the flag stays set), and the next check throws.
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                      }
                    }));
    assertTrue(thrown instanceof LeaseLostException, thrown.toString());
    // The task threw: the interrupt the loss delivered was cleared with it (whether the task saw
    // the loss through the interrupt or through checkValid), so the caller's next blocking call
    // (here the wait for the callback, which may run after the task ended) is not broken.
    assertFalse(Thread.currentThread().isInterrupted(), "withLock left the loss's interrupt set");
    LeaseLostException loss = signalled.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(
        loss.reason() == LeaseLostException.Reason.RENEWAL_FAILED
            || loss.reason() == LeaseLostException.Reason.EXPIRED,
        loss.toString());
    reconnect();
  }

  /**
   * While the store is cut off, an attempt fails in bounded time as unreachable (not as busy), with
   * the per-node account, and so does {@code acquire} once {@code maxWait} is spent; once it is
   * back, the same client is granted the lock.
   */
  @Test
  void whileTheStoreIsCutOffAttemptsFailInTimeAndSaySo() throws Exception {
    Redlock a = client();
    String r = resource("cut-off");
    a.acquire(resource("warm"), LONG_TTL, NO_HANG).release(); // connected before the cut
    disconnect();
    LockUnavailableException once =
        assertTimeoutPreemptively(
            NO_HANG,
            () -> assertThrows(LockUnavailableException.class, () -> a.tryAcquire(r, LONG_TTL)));
    assertEquals(
        LockUnavailableException.Reason.QUORUM_UNREACHABLE, once.reason(), once.toString());
    assertEquals(
        nodeNames(), once.nodeOutcomes().stream().map(NodeOutcome::node).toList(), once.toString());
    LockUnavailableException waited =
        assertTimeoutPreemptively(
            NO_HANG,
            () ->
                assertThrows(
                    LockUnavailableException.class,
                    () -> a.acquire(r, LONG_TTL, TIMING.scaled(Duration.ofMillis(500)))));
    assertEquals(
        LockUnavailableException.Reason.QUORUM_UNREACHABLE, waited.reason(), waited.toString());
    reconnect();
    a.acquire(r, LONG_TTL, NO_HANG).release();
  }

  // ---- release and close -------------------------------------------------------------------

  /**
   * A holder whose thread was interrupted ({@code Future.cancel(true)}, {@code shutdownNow()}, a
   * lease-loss interrupt) still releases, and keeps its interrupt: the next client gets the lock
   * long before the ttl.
   */
  @Test
  void anInterruptedHolderStillReleases() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("interrupted");
    Lease lease = a.acquire(r, LONG_TTL, NO_HANG);
    Thread.currentThread().interrupt();
    try {
      lease.release();
      assertTrue(Thread.currentThread().isInterrupted(), "release kept the interrupt");
    } finally {
      Thread.interrupted();
    }
    Lease next =
        assertTimeoutPreemptively(
            NO_HANG, () -> b.acquire(r, shortTtl(), TIMING.scaled(Duration.ofSeconds(10))));
    next.release();
  }

  @Test
  void releaseIsIdempotent() {
    Redlock a = client();
    String r = resource("released");
    Lease lease = a.tryAcquire(r, LONG_TTL).orElseThrow();
    lease.release();
    lease.release();
    lease.close();
    assertFalse(lease.isValid());
    assertEquals(Duration.ZERO, lease.remainingValidity());
    awaitNothingKept(r);
    client().tryAcquire(r, LONG_TTL).orElseThrow(() -> new AssertionError("released")).release();
  }

  /**
   * {@code close()} releases what is still held (another client gets it at once), is idempotent,
   * and refuses every later call.
   */
  @Test
  void closeReleasesWhatIsHeldAndRefusesLaterCalls() throws Exception {
    Redlock a = client();
    String r = resource("closed");
    acquireAndReleaseOnFourThreads(a, r, LONG_TTL);
    Lease stillHeld = a.tryAcquire(r, LONG_TTL).orElseThrow();
    a.close();
    a.close(); // idempotent
    assertFalse(stillHeld.isValid(), "close releases what is still held");
    awaitNothingKept(r);
    client()
        .tryAcquire(r, LONG_TTL)
        .orElseThrow(() -> new AssertionError("close released the lease in the store"))
        .release();
    assertThrows(IllegalStateException.class, () -> a.tryAcquire(r, LONG_TTL));
    assertThrows(IllegalStateException.class, () -> a.acquire(r, LONG_TTL, Duration.ZERO));
    assertThrows(
        IllegalStateException.class, () -> a.withLock(r, LONG_TTL, Duration.ZERO, lease -> 1));
  }

  /**
   * {@code close()} never frees the lease of a task still running inside {@code withLock}, even
   * called on an interrupted thread (whose flag it keeps): another client is refused until the task
   * returns, and close returns after it.
   */
  @Test
  void closeWaitsForATaskRunningInsideWithLock() throws Exception {
    Redlock a = client();
    String r = resource("close-task");
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    CompletableFuture<Boolean> validToTheEnd = new CompletableFuture<>();
    Thread job =
        new Thread(
            () -> {
              try {
                validToTheEnd.complete(
                    a.withLock(
                        r,
                        LONG_TTL,
                        NO_HANG,
                        lease -> {
                          started.countDown();
                          finish.await(); // interrupted only by a loss, which fails the test
                          return lease.isValid();
                        }));
              } catch (Exception e) {
                validToTheEnd.completeExceptionally(e);
              }
            },
            "job");
    job.start();
    assertTrue(started.await(NO_HANG.toMillis(), TimeUnit.MILLISECONDS));
    CompletableFuture<Boolean> flagKept = new CompletableFuture<>();
    Thread closing =
        new Thread(
            () -> {
              Thread.currentThread().interrupt(); // as a pool's shutdownNow() leaves it
              a.close();
              flagKept.complete(Thread.currentThread().isInterrupted());
            },
            "closing");
    closing.start();
    await().atMost(NO_HANG).until(() -> a.toString().contains("closed"));
    Redlock b = client();
    long until = System.nanoTime() + TIMING.scaled(Duration.ofSeconds(1)).toNanos();
    while (System.nanoTime() - until < 0) {
      Optional<Lease> taken = b.tryAcquire(r, LONG_TTL);
      taken.ifPresent(Lease::release);
      assertFalse(taken.isPresent(), "another client won the lock of a running task");
      assertTrue(closing.isAlive(), "close() returned while the task ran");
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
    finish.countDown();
    assertTrue(validToTheEnd.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS), "valid to the end");
    closing.join(NO_HANG.toMillis());
    assertFalse(closing.isAlive(), "close() returned once the task had");
    assertTrue(flagKept.getNow(false), "close() kept the caller's interrupt");
    awaitNothingKept(r);
    b.tryAcquire(r, LONG_TTL).orElseThrow(() -> new AssertionError("released after")).release();
  }

  /**
   * {@code close()} stops renewing a kept-alive lease and leaves it to its holder: it is lost (and
   * {@code onLost} told) when its validity runs out, and no other client wins it before then.
   */
  @Test
  void closeLeavesAKeptAliveLeaseToItsHolderUntilItsValidityRunsOut() throws Exception {
    Redlock a = client();
    String r = resource("close-kept");
    Lease lease = a.tryAcquire(r, shortTtl()).orElseThrow().keepAlive();
    CompletableFuture<LeaseLostException> lost = new CompletableFuture<>();
    lease.onLost(lost::complete);
    Thread closing = new Thread(a::close, "closing");
    closing.start();
    Redlock b = client();
    long deadline = System.nanoTime() + NO_HANG.toNanos();
    while (closing.isAlive()) {
      assertTrue(System.nanoTime() - deadline < 0, "close() hangs");
      Optional<Lease> taken = b.tryAcquire(r, shortTtl());
      boolean stillValid = lease.isValid();
      taken.ifPresent(Lease::release);
      assertFalse(taken.isPresent() && stillValid, "another client won a lease still valid");
      closing.join(20);
    }
    assertTrue(lost.isDone(), "told of the loss before close() returned; else released");
    assertEquals(LeaseLostException.Reason.EXPIRED, lost.get().reason());
    assertThrows(IllegalStateException.class, lease::keepAlive);
    await("free once its keys ran out (the drift margin after its validity)")
        .atMost(NO_HANG)
        .until(
            () ->
                b.tryAcquire(r, shortTtl())
                    .map(
                        free -> {
                          free.release();
                          return true;
                        })
                    .orElse(false));
  }

  // ---- listeners and input -----------------------------------------------------------------

  @Test
  void listenersSeeEachLeaseFromGrantToRelease() {
    List<LockEvent> events = new CopyOnWriteArrayList<>();
    Redlock a =
        client(settings -> settings.listener(events::add).listener(RedlockListener.auditLog()));
    Lease lease = a.tryAcquire(resource("listened"), LONG_TTL).orElseThrow();
    lease.release();
    assertEquals(
        List.of(LockEvent.Kind.ATTEMPT, LockEvent.Kind.ACQUIRED, LockEvent.Kind.RELEASED),
        events.stream().map(LockEvent::kind).toList());
    assertEquals(lease.fencingToken(), events.get(1).fencingToken());
    assertEquals(
        nodeNames(), events.get(1).nodeOutcomes().stream().map(NodeOutcome::node).toList());
  }

  @Test
  void badInputIsRefusedEarlyWithTheRule() {
    Redlock a = client();
    IllegalArgumentException blank =
        assertThrows(IllegalArgumentException.class, () -> a.tryAcquire(" ", shortTtl()));
    assertTrue(blank.getMessage().startsWith("resource must not be blank"), blank.getMessage());
    IllegalArgumentException zero =
        assertThrows(IllegalArgumentException.class, () -> a.tryAcquire("r", Duration.ZERO));
    assertTrue(zero.getMessage().startsWith("ttl must be > 0"), zero.getMessage());
    IllegalArgumentException tooLong =
        assertThrows(IllegalArgumentException.class, () -> a.tryAcquire("r", Duration.ofDays(2)));
    assertTrue(tooLong.getMessage().startsWith("ttl must be <= maxTtl"), tooLong.getMessage());
    assertThrows(NullPointerException.class, () -> a.tryAcquire(null, shortTtl()));
  }

  // ---- several resources at once, all or nothing --------------------------------------------

  /** {@code names} as resources of this test, in the order given (a set that keeps it). */
  private Set<String> resources(String... names) {
    Set<String> set = new LinkedHashSet<>();
    for (String name : names) {
      set.add(resource(name));
    }
    return set;
  }

  /** Asserts, where the store can be looked at, that no part of it holds {@code resource}. */
  private void assertNowhere(String resource, String why) {
    long places = placesHolding(resource);
    assertTrue(places <= 0, why + ": " + resource + " is held on " + places + " part(s)");
  }

  /** Waits, where the store can be looked at, until every part of it holds {@code resource}. */
  private void awaitEverywhere(String resource) {
    if (placesHolding(resource) >= 0) {
      await(resource + " held on every part of the store")
          .atMost(NO_HANG)
          .until(() -> placesHolding(resource) == nodeNames().size());
    }
  }

  /**
   * One resource of a set held elsewhere: the set is refused as contention, and none of the others
   * is left taken on any part of the store (inspected directly), at once; the rest of the set is
   * free to anyone, and the whole set is granted once the one is released.
   */
  @Test
  void aSetWithOneResourceHeldElsewhereTakesNothing() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Set<String> set = resources("all-a", "all-b-held", "all-c");
    Lease held = a.acquire(resource("all-b-held"), LONG_TTL, NO_HANG);
    awaitEverywhere(
        resource("all-b-held")); // so every node refuses: none can have taken the others
    assertEquals(Optional.empty(), b.tryAcquireAll(set, LONG_TTL), "one of the set is held");
    assertNowhere(resource("all-a"), "a refused set left a resource taken");
    assertNowhere(resource("all-c"), "a refused set left a resource taken");
    LockUnavailableException busy =
        assertThrows(
            LockUnavailableException.class,
            () -> b.acquireAll(set, LONG_TTL, TIMING.scaled(Duration.ofMillis(200))));
    assertEquals(LockUnavailableException.Reason.HELD_ELSEWHERE, busy.reason(), busy.toString());
    assertNowhere(resource("all-a"), "a refused acquireAll left a resource taken");
    assertNowhere(resource("all-c"), "a refused acquireAll left a resource taken");
    client()
        .tryAcquireAll(resources("all-a", "all-c"), LONG_TTL)
        .orElseThrow(() -> new AssertionError("the rest of the set is free"))
        .release();
    held.release();
    Lease all =
        b.tryAcquireAll(set, LONG_TTL)
            .orElseThrow(() -> new AssertionError("the whole set once the one is released"));
    assertEquals(set.stream().sorted().toList(), all.resources());
    assertEquals(all.resources().toString(), all.resource(), "the label is the sorted set");
    all.release();
  }

  /**
   * A lease of one resource and a lease of a set holding it exclude each other, both ways; a set
   * that does not overlap is granted beside them.
   */
  @Test
  void aSingleLockAndASetHoldingItExcludeEachOther() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String one = resource("x-one");
    String two = resource("x-two");
    Lease single = a.acquire(one, LONG_TTL, NO_HANG);
    assertTrue(b.tryAcquireAll(resources("x-one", "x-two"), LONG_TTL).isEmpty(), "single first");
    assertNowhere(two, "a set refused for its other resource took this one");
    single.release();
    Lease set = b.tryAcquireAll(resources("x-two", "x-one"), LONG_TTL).orElseThrow();
    assertTrue(refused(a, one), "the set holds its first resource against a single lock");
    assertTrue(refused(a, two), "and its second");
    assertTrue(
        a.tryAcquireAll(resources("x-two", "x-three"), LONG_TTL).isEmpty(), "overlapping sets");
    Lease beside = a.tryAcquireAll(resources("x-three", "x-four"), LONG_TTL).orElseThrow();
    assertTrue(set.isValid() && beside.isValid(), "disjoint sets are held side by side");
    set.release();
    beside.release();
    assertFalse(refused(a, one), "released: free");
    assertFalse(refused(a, two), "released: free");
  }

  /**
   * Each resource's token in a set is larger than the last holder's token of that resource alone,
   * and the next holder of it alone gets a larger one still; a resource the lease does not hold has
   * no token in it.
   */
  @Test
  void aSetHasATokenPerResourceLargerThanItsPreviousHolders() throws Exception {
    Redlock a = client();
    String one = resource("t-one");
    String two = resource("t-two");
    Lease first = a.acquire(one, LONG_TTL, NO_HANG);
    first.release();
    Lease second = a.acquire(two, LONG_TTL, NO_HANG);
    second.release();
    Lease set = a.acquireAll(Set.of(one, two), LONG_TTL, NO_HANG);
    assertTrue(set.fencingToken(one) > first.fencingToken(), "larger than the last of " + one);
    assertTrue(set.fencingToken(two) > second.fencingToken(), "larger than the last of " + two);
    assertEquals(
        Math.max(set.fencingToken(one), set.fencingToken(two)),
        set.fencingToken(),
        "fencingToken() is the set's one token");
    assertThrows(IllegalArgumentException.class, () -> set.fencingToken(resource("t-other")));
    assertThrows(NullPointerException.class, () -> set.fencingToken(null));
    set.release();
    Lease after = a.acquire(one, LONG_TTL, NO_HANG);
    assertTrue(after.fencingToken() > set.fencingToken(one), "the next holder's is larger still");
    after.release();
  }

  /**
   * {@code extend} moves the whole set's life forward in the store (each resource is still refused
   * to another client past the first ttl), and {@code release} gives every one back at once.
   */
  @Test
  void aSetIsExtendedAndReleasedAsOne() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Set<String> set = resources("e-one", "e-two", "e-three");
    Lease lease = a.tryAcquireAll(set, shortTtl()).orElseThrow();
    Duration longer = atMostMaxTtl(TIMING.scaled(Duration.ofSeconds(30)));
    assertTrue(lease.extend(longer), "a quorum extended every key");
    assertTrue(lease.extend(shortTtl()), "a shorter extend shortens nothing, and holds");
    assertThroughout(
        shortTtl().plus(TIMING.scaled(Duration.ofMillis(500))),
        "the store kept every resource of the extended set past its first ttl",
        () -> set.stream().allMatch(r -> refused(b, r)));
    lease.release();
    for (String r : set) {
      awaitNothingKept(r);
      assertFalse(refused(b, r), "released as one: " + r + " is free at once");
    }
    assertThrows(IllegalStateException.class, () -> lease.extend(LONG_TTL));
  }

  /** A set left to expire gives every resource back, in the store, with nothing left behind. */
  @Test
  void anExpiredSetGivesEveryResourceBack() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Set<String> set = resources("x-left", "x-mid", "x-right");
    Lease lease = a.tryAcquireAll(set, shortTtl()).orElseThrow();
    waitOut(lease);
    for (String r : set) {
      Lease next =
          await(r + " is free once the set expired")
              .atMost(NO_HANG)
              .until(() -> b.tryAcquire(r, LONG_TTL), Optional::isPresent)
              .orElseThrow();
      assertTrue(next.fencingToken() > lease.fencingToken(r), "tokens grow past the expired set");
      next.release();
    }
  }

  /** withLockAll renews the whole set while the task runs and releases it after. */
  @Test
  void withLockAllRenewsTheSetWhileTheTaskRuns() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Set<String> set = resources("w-one", "w-two");
    Duration ttl = shortTtl();
    String result =
        a.withLockAll(
            set,
            ttl,
            NO_HANG,
            lease -> {
              long until = System.nanoTime() + ttl.multipliedBy(2).toNanos();
              while (System.nanoTime() < until) {
                for (String r : set) {
                  assertTrue(b.tryAcquire(r, LONG_TTL).isEmpty(), r + " still held");
                }
                lease.checkValid();
                LockSupport.parkNanos(ttl.toNanos() / 4);
              }
              return "done";
            });
    assertEquals("done", result);
    b.tryAcquireAll(set, LONG_TTL)
        .orElseThrow(() -> new AssertionError("withLockAll released the set"))
        .release();
  }

  /**
   * 3 clients × 4 threads ask for overlapping sets of 4 resources in opposite orders (and for
   * single resources among them), each waiting with {@code acquireAll}: every thread finishes in
   * bounded time (no deadlock, no starvation), and the history checker finds at most one holder per
   * resource at any time and each resource's tokens growing in grant order.
   */
  @Test
  void overlappingSetsInOppositeOrdersNeverDeadlockNorDoubleGrant() throws Exception {
    List<List<String>> asks =
        List.of(
            List.of("o-0", "o-1", "o-2"),
            List.of("o-2", "o-1", "o-0"),
            List.of("o-3", "o-1"),
            List.of("o-1", "o-3"),
            List.of("o-0", "o-3"),
            List.of("o-2"));
    int clientsCount = 3;
    int threadsPerClient = 4;
    int rounds = 8;
    History history = new History();
    AtomicInteger grants = new AtomicInteger();
    Duration maxWait = TIMING.scaled(Duration.ofSeconds(60));
    ExecutorService pool = Executors.newFixedThreadPool(clientsCount * threadsPerClient);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int c = 0; c < clientsCount; c++) {
        Redlock s = client();
        for (int t = 0; t < threadsPerClient; t++) {
          String who = "client" + c + "-thread" + t;
          int first = c * threadsPerClient + t;
          workers.add(
              pool.submit(
                  () -> {
                    for (int i = 0; i < rounds; i++) {
                      List<String> names = asks.get((first + i) % asks.size());
                      Set<String> set = resources(names.toArray(new String[0]));
                      try (Lease lease =
                          set.size() == 1
                              ? s.acquire(set.iterator().next(), LONG_TTL, maxWait)
                              : s.acquireAll(set, LONG_TTL, maxWait)) {
                        history.granted(who, lease);
                        assertTrue(lease.isValid());
                        history.foundValid(who, lease);
                        grants.incrementAndGet();
                        history.released(who, lease);
                      }
                    }
                    return null;
                  }));
        }
      }
      for (Future<?> f : workers) {
        f.get(TIMING.scaled(Duration.ofMinutes(2)).toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(List.of(), HistoryChecker.violations(history));
    assertEquals(clientsCount * threadsPerClient * rounds, grants.get());
    for (String name : List.of("o-0", "o-1", "o-2", "o-3")) {
      assertFalse(refused(client(), resource(name)), "every lease was released");
      awaitNothingKept(resource(name));
    }
  }

  @Test
  void badSetsAreRefusedEarlyWithTheRule() {
    Redlock a = client();
    Duration ttl = shortTtl();
    assertRule(() -> a.tryAcquireAll(Set.of(), ttl), "resources must not be empty");
    Set<String> many = new java.util.TreeSet<>();
    for (int i = 0; i <= Redlock.MAX_RESOURCES; i++) {
      many.add(resource("many-" + i));
    }
    assertRule(
        () -> a.tryAcquireAll(many, ttl),
        "resources must hold at most " + Redlock.MAX_RESOURCES + " names, was 65");
    assertRule(
        () -> a.tryAcquireAll(Set.of(resource("ok"), " "), ttl),
        "resources must not contain a blank name");
    // A set whose equality is not String's: it holds one name twice.
    Set<String> twice = new java.util.TreeSet<>((x, y) -> x.equals(y) ? 1 : x.compareTo(y));
    twice.add(resource("twice"));
    twice.add(resource("twice"));
    assertRule(() -> a.tryAcquireAll(twice, ttl), "resources must not hold a name twice");
    // A name every store refuses: too long for a table's key, and with the nodes' reserved mark.
    assertRule(
        () -> a.tryAcquireAll(Set.of(resource("ok"), "@" + "x".repeat(300)), ttl), "resources: ");
    Set<String> withNull = new java.util.HashSet<>(java.util.Arrays.asList(resource("ok"), null));
    NullPointerException nulls =
        assertThrows(NullPointerException.class, () -> a.tryAcquireAll(withNull, ttl));
    assertEquals("resources must not contain null", nulls.getMessage());
    assertThrows(NullPointerException.class, () -> a.tryAcquireAll(null, ttl));
    assertRule(() -> a.tryAcquireAll(resources("a", "b"), Duration.ZERO), "ttl must be > 0");
    assertRule(
        () -> a.acquireAll(resources("a", "b"), ttl, Duration.ofMillis(-1)),
        "maxWait must be >= 0");
    for (String r : List.of("a", "b", "ok", "twice")) {
      assertNowhere(resource(r), "a refused request took something");
    }
  }

  private static void assertRule(Executable call, String startsWith) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().startsWith(startsWith), e.getMessage());
  }

  // ---- the asynchronous API: the same leases, on every store ------------------------------

  @Test
  void theAsyncApiGrantsRefusesWaitsAndReleasesLikeTheBlockingOne() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String r = resource("async");
    Lease held =
        a.tryAcquireAsync(r, LONG_TTL).get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS).orElseThrow();
    assertEquals(
        Optional.empty(),
        b.tryAcquireAsync(r, LONG_TTL).get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS));
    CompletableFuture<Lease> waiting = b.acquireAsync(r, LONG_TTL, NO_HANG);
    assertFalse(waiting.isDone(), "granted while held");
    held.release();
    Lease next = waiting.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(next.fencingToken() > held.fencingToken(), "fencing tokens grow");
    next.release();
    String done =
        a.withLockAsync(r, LONG_TTL, NO_HANG, lease -> CompletableFuture.completedFuture("done"))
            .get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    assertEquals("done", done);
    awaitNothingKept(r);
    b.tryAcquire(r, LONG_TTL)
        .orElseThrow(() -> new AssertionError("withLockAsync released it: free at once"))
        .release();
  }

  /** Cancelled while it waits: the lock freed later is not taken by it. */
  @Test
  void aCancelledAsyncWaitTakesNothingLater() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    Redlock a = client();
    Redlock b =
        client(
            settings ->
                settings
                    .retryDelay(TIMING.scaled(Duration.ofMillis(20)))
                    .retryJitter(Duration.ZERO)
                    .listener(
                        e -> {
                          if (e.kind() == LockEvent.Kind.ATTEMPT) {
                            attempts.incrementAndGet();
                          }
                        }));
    String r = resource("asyncCancel");
    Lease held = a.acquire(r, LONG_TTL, NO_HANG);
    CompletableFuture<Lease> waiting = b.acquireAsync(r, LONG_TTL, NO_HANG);
    await("it retries").atMost(NO_HANG).until(() -> attempts.get() >= 2);
    assertTrue(waiting.cancel(true));
    int attemptsAtCancel = attempts.get();
    held.release();
    Lease again =
        a.tryAcquire(r, LONG_TTL)
            .orElseThrow(() -> new AssertionError("taken by the cancelled wait"));
    assertTrue(
        attempts.get() <= attemptsAtCancel + 1, "at most the attempt in flight at the cancel");
    again.release();
  }

  // ---- semaphores: K permits, each a mutex (issue 17 item 2) -------------------------------

  /** Takes {@code count} permits of {@code semaphore} at once (tryAcquire, each must be won). */
  private static List<Lease> takePermits(Semaphore semaphore, int count) {
    List<Lease> permits = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      permits.add(
          semaphore
              .tryAcquire(LONG_TTL)
              .orElseThrow(() -> new AssertionError("a free permit of " + semaphore)));
    }
    return permits;
  }

  /** The permit resources {@code permits} hold, sorted. */
  private static List<String> permitResources(List<Lease> permits) {
    return permits.stream().map(Lease::resource).sorted().toList();
  }

  /**
   * A semaphore of 3 over two clients: three permits, each a different permit resource, a fourth
   * refused to both (tryAcquire empty; acquire gives up as contention, naming the semaphore); a
   * released permit is granted again at once, on the same permit resource with a larger token.
   */
  @Test
  void aSemaphoreGrantsAtMostItsPermitsAndTheNextOnRelease() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String name = resource("sem-k");
    Semaphore ofA = a.semaphore(name, 3);
    Semaphore ofB = b.semaphore(name, 3);
    List<Lease> held = new ArrayList<>(takePermits(ofA, 2));
    held.addAll(takePermits(ofB, 1));
    assertEquals(
        List.of(ofA.permitResource(0), ofA.permitResource(1), ofA.permitResource(2)),
        permitResources(held),
        "three permits, three permit resources");
    assertEquals(name + "@permit:1", ofA.permitResource(1));
    assertEquals(Optional.empty(), ofA.tryAcquire(LONG_TTL), "a fourth permit");
    assertEquals(Optional.empty(), ofB.tryAcquire(LONG_TTL), "a fourth permit, other client");
    LockUnavailableException busy =
        assertThrows(
            LockUnavailableException.class,
            () -> ofB.acquire(LONG_TTL, TIMING.scaled(Duration.ofMillis(200))));
    assertEquals(LockUnavailableException.Reason.HELD_ELSEWHERE, busy.reason(), busy.toString());
    assertEquals(name, busy.resource());
    assertTrue(busy.getMessage().contains("all 3 permits held elsewhere"), busy.getMessage());
    Lease given = held.remove(1);
    given.release();
    Lease next =
        ofB.tryAcquire(LONG_TTL).orElseThrow(() -> new AssertionError("free once released"));
    assertEquals(given.resource(), next.resource(), "the one free permit");
    assertTrue(next.fencingToken() > given.fencingToken(), "its token grows");
    held.add(next);
    held.forEach(Lease::release);
    for (int i = 0; i < 3; i++) {
      awaitNothingKept(ofA.permitResource(i));
    }
    assertEquals(3, takePermits(ofA, 3).size(), "all three free again");
  }

  /**
   * A permit whose holder stops is given back by its ttl: a waiting client is granted it, and the
   * stale holder can neither release nor extend the new holder's permit (owner-checked).
   */
  @Test
  void aPermitComesBackWithItsTtlAndAStaleHolderCannotTouchTheNext() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Redlock c = client();
    String name = resource("sem-ttl");
    Semaphore ofA = a.semaphore(name, 2);
    Lease stalled = ofA.tryAcquire(shortTtl()).orElseThrow();
    Lease kept = ofA.tryAcquire(LONG_TTL).orElseThrow();
    Lease next =
        assertTimeoutPreemptively(NO_HANG, () -> b.semaphore(name, 2).acquire(LONG_TTL, NO_HANG));
    assertFalse(stalled.isValid(), "granted only once the stalled permit had run out");
    assertEquals(stalled.resource(), next.resource(), "the stalled holder's permit");
    assertTrue(next.fencingToken() > stalled.fencingToken());
    assertFalse(stalled.extend(LONG_TTL), "an expired permit is never extended");
    stalled.release(); // owner-checked: B's permit stays
    assertEquals(Optional.empty(), c.semaphore(name, 2).tryAcquire(LONG_TTL), "both still held");
    assertTrue(next.isValid() && kept.isValid());
    next.release();
    kept.release();
  }

  /** withPermit renews the permit while the task runs (past its ttl) and releases it after. */
  @Test
  void withPermitRenewsThePermitWhileTheTaskRunsAndReleasesAfter() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String name = resource("sem-renewed");
    Semaphore ofB = b.semaphore(name, 1);
    Duration ttl = shortTtl();
    String result =
        a.semaphore(name, 1)
            .withPermit(
                ttl,
                NO_HANG,
                permit -> {
                  // Past its ttl: only renewal keeps it held.
                  long until = System.nanoTime() + ttl.multipliedBy(5).dividedBy(4).toNanos();
                  while (System.nanoTime() < until) {
                    assertTrue(ofB.tryAcquire(LONG_TTL).isEmpty(), "still held");
                    permit.checkValid();
                    LockSupport.parkNanos(ttl.toNanos() / 4);
                  }
                  return "done";
                });
    assertEquals("done", result);
    ofB.tryAcquire(LONG_TTL)
        .orElseThrow(() -> new AssertionError("withPermit released the permit"))
        .release();
  }

  /**
   * The number of permits changes on a live semaphore. Growing from 3 to 5: a client on 5 takes the
   * two new permits beside the three held, a client on 3 still none. Shrinking from 5 to 3: the
   * permits at and above 3 are never granted to a client on 3, leases on them run until released,
   * and meanwhile the valid permits are at most 5 (the largest number they were taken through),
   * coming down to 3 once those are released.
   */
  @Test
  void growingAndShrinkingThePermitsOfALiveSemaphore() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String name = resource("sem-resize");
    Semaphore three = a.semaphore(name, 3);
    Semaphore five = b.semaphore(name, 5);
    List<Lease> low = takePermits(three, 3);
    assertEquals(Optional.empty(), three.tryAcquire(LONG_TTL), "3 of 3");
    List<Lease> high = takePermits(five, 2); // grown: the two new permits
    assertEquals(
        List.of(five.permitResource(3), five.permitResource(4)),
        permitResources(high),
        "the grown client takes the new permits");
    assertEquals(Optional.empty(), five.tryAcquire(LONG_TTL), "5 of 5");
    assertEquals(Optional.empty(), three.tryAcquire(LONG_TTL), "a client on 3 keeps below 3");
    // Shrunk to 3: the holders of permits 3 and 4 keep them until they release.
    low.forEach(Lease::release);
    Semaphore shrunk = client().semaphore(name, 3);
    List<Lease> again = takePermits(shrunk, 3);
    assertEquals(
        List.of(shrunk.permitResource(0), shrunk.permitResource(1), shrunk.permitResource(2)),
        permitResources(again));
    assertEquals(Optional.empty(), shrunk.tryAcquire(LONG_TTL), "never permit 3 or 4");
    assertTrue(high.stream().allMatch(Lease::isValid), "leases above 3 run until released");
    high.forEach(Lease::release);
    assertEquals(Optional.empty(), shrunk.tryAcquire(LONG_TTL), "3 of 3 once they are gone");
    again.forEach(Lease::release);
    for (int i = 0; i < 5; i++) {
      awaitNothingKept(five.permitResource(i));
    }
  }

  /**
   * 3 clients × 3 threads × 6 rounds on a semaphore of 2, each holding its permit a moment: never
   * more than 2 holders (counted in this JVM between grant and release, and by the history
   * checker), each permit's tokens growing, and the bound reached.
   */
  @Test
  void manyClientsShareASemaphoreAndNeverExceedItsPermits() throws Exception {
    int clientsCount = 3;
    int threadsPerClient = 3;
    int rounds = 6;
    String name = resource("sem-contended");
    History history = new History();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    Duration maxWait = TIMING.scaled(Duration.ofSeconds(60));
    ExecutorService pool = Executors.newFixedThreadPool(clientsCount * threadsPerClient);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int c = 0; c < clientsCount; c++) {
        Semaphore semaphore = client().semaphore(name, 2);
        for (int t = 0; t < threadsPerClient; t++) {
          String who = "client" + c + "-thread" + t;
          workers.add(
              pool.submit(
                  () -> {
                    for (int i = 0; i < rounds; i++) {
                      try (Lease permit = semaphore.acquire(LONG_TTL, maxWait)) {
                        history.permitGranted(who, name, 2, permit);
                        most.accumulateAndGet(inside.incrementAndGet(), Math::max);
                        assertTrue(permit.isValid());
                        history.foundValid(who, permit);
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)); // the work
                        inside.decrementAndGet();
                        history.released(who, permit);
                      }
                    }
                    return null;
                  }));
        }
      }
      for (Future<?> f : workers) {
        f.get(TIMING.scaled(Duration.ofMinutes(2)).toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(List.of(), HistoryChecker.violations(history));
    assertTrue(most.get() <= 2, "at most 2 holders at once, was " + most.get());
    assertEquals(2, HistoryChecker.mostPermitHoldersAtOnce(history, name), "the bound was used");
  }

  @Test
  void badSemaphoresAreRefusedEarlyWithTheRule() {
    Redlock a = client();
    assertRule(() -> a.semaphore(" ", 2), "name must not be blank");
    assertRule(() -> a.semaphore("jobs@permit:1", 2), "name must not contain '@permit:'");
    assertRule(() -> a.semaphore(resource("s"), 0), "permits must be between 1 and 64, was 0");
    assertRule(
        () -> a.semaphore(resource("s"), Semaphore.MAX_PERMITS + 1),
        "permits must be between 1 and 64, was 65");
    // A name every store refuses: too long for a table's key, and with the nodes' reserved mark.
    assertRule(
        () -> a.semaphore("@" + "x".repeat(300), 2), "name must make permit resources the store");
    NullPointerException nulls =
        assertThrows(NullPointerException.class, () -> a.semaphore(null, 2));
    assertEquals("name must not be null", nulls.getMessage());
    Semaphore semaphore = a.semaphore(resource("s"), 2);
    assertEquals(resource("s"), semaphore.name());
    assertEquals(2, semaphore.permits());
    assertRule(() -> semaphore.permitResource(2), "index must be between 0 and 1, was 2");
    assertRule(() -> semaphore.tryAcquire(Duration.ZERO), "ttl must be > 0");
    assertRule(() -> semaphore.acquire(shortTtl(), Duration.ofMillis(-1)), "maxWait must be >= 0");
    assertThrows(NullPointerException.class, () -> semaphore.tryAcquire(null));
    assertNowhere(semaphore.permitResource(0), "a refused request took a permit");
    assertNowhere(semaphore.permitResource(1), "a refused request took a permit");
  }

  // ---- read-write locks: many readers or one writer ---------------------------------------

  /**
   * The read-write lock {@code name} of {@code client}; on a store without read-write locks, checks
   * that it says so, naming the store, and skips the test.
   */
  private ReadWriteLock readWrite(Redlock client, String name) {
    try {
      return client.readWriteLock(resource(name));
    } catch (UnsupportedOperationException e) {
      assertTrue(
          e.getMessage().contains("has no read-write locks") && e.getMessage().contains("Store"),
          "a store without read-write locks says so and names itself: " + e.getMessage());
      org.junit.jupiter.api.Assumptions.abort(e.getMessage());
      throw e; // not reached
    }
  }

  @Test
  void readersShareAndAWriterWaitsForEveryOneOfThem() throws Exception {
    ReadWriteLock a = readWrite(client(), "rw-share");
    ReadWriteLock b = readWrite(client(), "rw-share");
    ReadWriteLock c = readWrite(client(), "rw-share");
    Lease readA = a.readLock().tryAcquire(LONG_TTL).orElseThrow();
    Lease readB =
        b.readLock()
            .tryAcquire(LONG_TTL)
            .orElseThrow(() -> new AssertionError("readers share the lock"));
    assertEquals(a.name(), readA.resource());
    assertTrue(c.writeLock().tryAcquire(LONG_TTL).isEmpty(), "a writer waits for the readers");
    readA.release();
    assertTrue(c.writeLock().tryAcquire(LONG_TTL).isEmpty(), "and for the last of them");
    assertTrue(readB.isValid());
    readB.release();
    Lease write =
        c.writeLock()
            .tryAcquire(LONG_TTL)
            .orElseThrow(() -> new AssertionError("free for the writer once every reader left"));
    assertTrue(
        write.fencingToken() > readA.fencingToken() && write.fencingToken() > readB.fencingToken(),
        "a writer's token is above every read it excluded: "
            + write.fencingToken()
            + " vs "
            + readA.fencingToken()
            + ", "
            + readB.fencingToken());
    assertTrue(a.readLock().tryAcquire(LONG_TTL).isEmpty(), "a writer excludes readers");
    assertTrue(b.writeLock().tryAcquire(LONG_TTL).isEmpty(), "and other writers");
    write.release();
    Lease readAfter =
        a.readLock()
            .tryAcquire(LONG_TTL)
            .orElseThrow(() -> new AssertionError("readers again once the writer left"));
    assertTrue(readAfter.fencingToken() > write.fencingToken(), "a read after a write is above it");
    readAfter.release();
  }

  /** A plain lock and a read-write lock of the same name are apart: neither refuses the other. */
  @Test
  void aPlainLockOfTheSameNameIsApartFromTheReadWriteLock() throws Exception {
    Redlock a = client();
    Redlock b = client();
    ReadWriteLock rw = readWrite(a, "rw-apart");
    try (Lease plain = b.acquire(rw.name(), LONG_TTL, NO_HANG)) {
      Lease write =
          rw.writeLock()
              .tryAcquire(LONG_TTL)
              .orElseThrow(() -> new AssertionError("the plain lock does not hold the rw lock"));
      assertTrue(b.tryAcquire(rw.name(), LONG_TTL).isEmpty(), "the plain lock is still held");
      write.release();
      assertTrue(plain.isValid());
    }
  }

  /**
   * Writer preference: while readers keep coming, each overlapping the last, a writer waiting with
   * {@code acquire} gets in; readers asking meanwhile are refused once it waits.
   */
  @Test
  void aWriterGetsInWhileReadersKeepComing() throws Exception {
    ReadWriteLock readers = readWrite(client(), "rw-prefer");
    ReadWriteLock writer =
        readWrite(
            client(
                settings ->
                    settings
                        .retryDelay(TIMING.scaled(Duration.ofMillis(20)))
                        .retryJitter(TIMING.scaled(Duration.ofMillis(10)))),
            "rw-prefer");
    Lease last = readers.readLock().tryAcquire(LONG_TTL).orElseThrow();
    CompletableFuture<Lease> write =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return writer.writeLock().acquire(LONG_TTL, NO_HANG);
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    int refusedReaders = 0;
    // Readers keep coming, each taken before the previous is released: without writer preference
    // the lock would never be free of readers.
    long until = System.nanoTime() + NO_HANG.toNanos();
    while (!write.isDone() && System.nanoTime() - until < 0) {
      Optional<Lease> next = readers.readLock().tryAcquire(LONG_TTL);
      if (next.isEmpty()) {
        refusedReaders++;
      }
      last.release();
      last = next.orElse(null);
      if (last == null) {
        break; // refused: the writer waits; the last reader is gone
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
    Lease written = write.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(refusedReaders >= 1, "a reader was refused while the writer waited");
    assertTrue(written.isValid());
    assertTrue(readers.readLock().tryAcquire(LONG_TTL).isEmpty(), "the writer is alone");
    written.release();
    if (last != null) {
      last.release();
    }
  }

  /** A crashed reader (never released) holds the writer off only until its lease expires. */
  @Test
  void anExpiredReaderFreesTheWriter() throws Exception {
    ReadWriteLock a = readWrite(client(), "rw-expire");
    ReadWriteLock b = readWrite(client(), "rw-expire");
    Lease read = a.readLock().tryAcquire(shortTtl()).orElseThrow();
    assertTrue(b.writeLock().tryAcquire(LONG_TTL).isEmpty());
    waitOut(read);
    Lease write =
        await("the writer gets in once the reader's lease expired")
            .atMost(NO_HANG)
            .until(() -> b.writeLock().tryAcquire(LONG_TTL), Optional::isPresent)
            .orElseThrow();
    assertTrue(write.fencingToken() > read.fencingToken(), "above the expired read's token");
    write.release();
  }

  /**
   * Release is owner-checked: a reader's release gives back its own entry only, never another
   * reader's; a released lease cannot be extended.
   */
  @Test
  void aReadersReleaseGivesBackItsOwnEntryOnly() throws Exception {
    ReadWriteLock a = readWrite(client(), "rw-owner");
    ReadWriteLock b = readWrite(client(), "rw-owner");
    Lease readA = a.readLock().tryAcquire(LONG_TTL).orElseThrow();
    Lease readB = b.readLock().tryAcquire(LONG_TTL).orElseThrow();
    readA.release();
    readA.release(); // idempotent: must not take B's entry
    assertTrue(b.writeLock().tryAcquire(LONG_TTL).isEmpty(), "B still reads");
    assertTrue(readB.extend(LONG_TTL), "B's entry is its own to extend");
    assertThrows(IllegalStateException.class, () -> readA.extend(LONG_TTL));
    readB.release();
  }

  /**
   * withLock on either side renews the lease past its ttl (held 1.25 ttl, in which it must have
   * been renewed) and releases it after.
   */
  @Test
  void withLockRenewsBothSides() throws Exception {
    ReadWriteLock a = readWrite(client(), "rw-renew");
    ReadWriteLock b = readWrite(client(), "rw-renew");
    Duration ttl = shortTtl();
    for (ReadWriteLock.Side side : List.of(a.readLock(), a.writeLock())) {
      String result =
          side.withLock(
              ttl,
              NO_HANG,
              lease -> {
                long until = System.nanoTime() + ttl.plus(ttl.dividedBy(4)).toNanos();
                while (System.nanoTime() < until) {
                  assertTrue(b.writeLock().tryAcquire(LONG_TTL).isEmpty(), "still held");
                  lease.checkValid();
                  LockSupport.parkNanos(ttl.toNanos() / 4);
                }
                return "done";
              });
      assertEquals("done", result);
    }
    b.writeLock()
        .tryAcquire(LONG_TTL)
        .orElseThrow(() -> new AssertionError("withLock released it"))
        .release();
  }

  /**
   * 3 clients × 4 threads, mostly readers, a write now and then, each waiting with {@code acquire}:
   * the history checker finds no writer overlapping anyone, tokens in order between reads and
   * writes, and readers did share.
   */
  @Test
  void readersAndWritersUnderContentionKeepWritersAlone() throws Exception {
    History history = new History();
    AtomicInteger grants = new AtomicInteger();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger mostReadersInside = new AtomicInteger();
    int clientsCount = 3;
    int threadsPerClient = 4;
    int rounds = 6;
    Duration maxWait = TIMING.scaled(Duration.ofSeconds(60));
    ExecutorService pool = Executors.newFixedThreadPool(clientsCount * threadsPerClient);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int c = 0; c < clientsCount; c++) {
        ReadWriteLock rw = readWrite(client(), "rw-contended");
        for (int t = 0; t < threadsPerClient; t++) {
          String who = "client" + c + "-thread" + t;
          int first = c * threadsPerClient + t;
          workers.add(
              pool.submit(
                  () -> {
                    for (int i = 0; i < rounds; i++) {
                      boolean writes = (first + i) % 4 == 0;
                      ReadWriteLock.Side side = writes ? rw.writeLock() : rw.readLock();
                      try (Lease lease = side.acquire(LONG_TTL, maxWait)) {
                        if (writes) {
                          history.granted(who, lease);
                        } else {
                          history.grantedRead(who, lease);
                          mostReadersInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                          inside.decrementAndGet();
                        }
                        assertTrue(lease.isValid());
                        grants.incrementAndGet();
                        history.released(who, lease);
                      }
                    }
                    return null;
                  }));
        }
      }
      for (Future<?> f : workers) {
        f.get(TIMING.scaled(Duration.ofMinutes(2)).toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(List.of(), HistoryChecker.violations(history));
    assertEquals(clientsCount * threadsPerClient * rounds, grants.get());
    assertTrue(mostReadersInside.get() >= 2, "readers shared: " + mostReadersInside.get());
    readWrite(client(), "rw-contended")
        .writeLock()
        .tryAcquire(LONG_TTL)
        .orElseThrow(() -> new AssertionError("every lease was released"))
        .release();
  }

  /**
   * A read lease in withLock whose store is cut off is lost as a plain lease is: onLost runs, the
   * LOST event names the lock, the task is told (checkValid throws); once reconnected a writer gets
   * in.
   */
  @Test
  void aReadLeaseCutOffMidTaskIsLostAndTellsTheTask() throws Exception {
    List<LockEvent> events = new CopyOnWriteArrayList<>();
    ReadWriteLock a = readWrite(client(settings -> settings.listener(events::add)), "rw-lost");
    CompletableFuture<LeaseLostException> signalled = new CompletableFuture<>();
    Exception thrown =
        assertThrows(
            Exception.class,
            () ->
                a.readLock()
                    .withLock(
                        shortTtl(),
                        NO_HANG,
                        lease -> {
                          lease.onLost(signalled::complete);
                          disconnect();
                          while (true) {
                            lease.checkValid();
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                          }
                        }));
    assertTrue(thrown instanceof LeaseLostException, thrown.toString());
    assertFalse(Thread.currentThread().isInterrupted(), "withLock left the loss's interrupt set");
    signalled.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    await("a LOST event for the lock")
        .atMost(NO_HANG)
        .until(
            () ->
                events.stream()
                    .anyMatch(
                        e -> e.kind() == LockEvent.Kind.LOST && a.name().equals(e.resource())));
    reconnect();
    await("a writer gets in once the lost reader is gone")
        .atMost(NO_HANG)
        .until(
            () -> readWrite(client(), "rw-lost").writeLock().tryAcquire(LONG_TTL),
            Optional::isPresent)
        .orElseThrow()
        .release();
  }

  @Test
  void badReadWriteLockNamesAndTtlsAreRefusedEarlyWithTheRule() {
    Redlock a = client();
    ReadWriteLock rw = readWrite(a, "rw-bad");
    NullPointerException npe =
        assertThrows(NullPointerException.class, () -> a.readWriteLock(null));
    assertTrue(npe.getMessage().contains("name"), npe.getMessage());
    IllegalArgumentException blank =
        assertThrows(IllegalArgumentException.class, () -> a.readWriteLock(" "));
    assertTrue(blank.getMessage().contains("name must not be blank"), blank.getMessage());
    assertThrows(IllegalArgumentException.class, () -> rw.readLock().tryAcquire(Duration.ZERO));
    IllegalArgumentException wait =
        assertThrows(
            IllegalArgumentException.class,
            () -> rw.writeLock().acquire(LONG_TTL, Duration.ofSeconds(-1)));
    assertTrue(wait.getMessage().contains("maxWait"), wait.getMessage());
  }
}
