package dev.redlock.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.LockService;
import dev.redlock.LockUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What every lease store must do, whatever keeps the leases: the semantics the Redis quorum and the
 * SQL table share. A store's suite extends this and says how to make a client, how long a short ttl
 * is, and how to cut the store off and back.
 *
 * <pre>{@code
 * class PostgresLeasesIT extends LeaseContract {
 *   protected LockService newClient() { return JdbcLeases.create(dataSource, table, settings); }
 *   ...
 * }
 * }</pre>
 */
public abstract class LeaseContract {
  protected static final Duration NO_HANG = Duration.ofSeconds(30);
  private final List<LockService> clients = new ArrayList<>();
  private final List<AutoCloseable> afterClients = new ArrayList<>();

  /** A new client of the store under test (each test may make several). */
  protected abstract LockService createClient();

  /** A ttl short enough to wait out in a test, long enough to renew (a few timeouts). */
  protected abstract Duration shortTtl();

  /** Makes the store unreachable for the clients (as if it stopped), until {@link #reconnect}. */
  protected abstract void disconnect();

  /** Ends {@link #disconnect()}. */
  protected abstract void reconnect();

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

  protected final LockService client() {
    LockService client = createClient();
    clients.add(client);
    return client;
  }

  @AfterEach
  void closeClients() throws Exception {
    reconnect();
    clients.forEach(LockService::close);
    clients.clear();
    for (AutoCloseable resource : afterClients) {
      resource.close();
    }
    afterClients.clear();
  }

  private static void waitOut(Lease lease) {
    long deadline = System.nanoTime() + NO_HANG.toNanos();
    while (lease.isValid() && System.nanoTime() < deadline) {
      LockSupport.parkNanos(lease.remainingValidity().toNanos() + 1_000_000);
    }
  }

  @Test
  void oneHolderAtATimeAndTheNextAfterRelease() throws Exception {
    LockService a = client();
    LockService b = client();
    String r = resource("exclusive");
    Lease held = a.acquire(r, Duration.ofSeconds(10), NO_HANG);
    assertTrue(held.isValid());
    assertTrue(b.tryAcquire(r, Duration.ofSeconds(10)).isEmpty(), "held elsewhere");
    held.release();
    Lease next = b.acquire(r, Duration.ofSeconds(10), NO_HANG);
    assertTrue(next.fencingToken() > held.fencingToken(), "fencing tokens grow");
    next.release();
  }

  @Test
  void aHolderThatHangsLosesTheLockWhenItsTtlEnds() throws Exception {
    LockService a = client();
    LockService b = client();
    String r = resource("hang");
    Lease stalled = a.acquire(r, shortTtl(), NO_HANG);
    // A stops renewing and acting: after its ttl, B gets the lock.
    Lease next =
        assertTimeoutPreemptively(NO_HANG, () -> b.acquire(r, Duration.ofSeconds(10), NO_HANG));
    assertFalse(stalled.isValid(), "B was granted only once A's lease had ended");
    assertTrue(next.fencingToken() > stalled.fencingToken());
    next.release();
  }

  /**
   * {@code extend(ttl)} with less than the lease has left shortens neither the lease nor the
   * store's copy: another client still cannot take the lock once that shorter ttl has passed.
   */
  @Test
  void anExtendShorterThanWhatIsLeftShortensNothing() throws Exception {
    LockService a = client();
    LockService b = client();
    String r = resource("shorter");
    Duration longTtl = shortTtl().multipliedBy(3);
    Lease lease = a.acquire(r, longTtl, NO_HANG);
    assertTrue(lease.extend(shortTtl()), "a quorum still holds the lease");
    assertTrue(
        lease.remainingValidity().compareTo(shortTtl().multipliedBy(2)) > 0,
        "the lease kept its longer validity: " + lease.remainingValidity());
    // Past the shorter ttl (and a margin for clocks), the store must still hold it.
    long until = System.nanoTime() + shortTtl().plusMillis(500).toNanos();
    while (System.nanoTime() < until) {
      Optional<Lease> other = b.tryAcquire(r, shortTtl());
      other.ifPresent(Lease::release);
      assertTrue(other.isEmpty(), "the store shortened the lease: another client took it");
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
    }
    assertTrue(lease.isValid());
    lease.release();
  }

  /**
   * A holder whose thread was interrupted ({@code Future.cancel(true)}, {@code shutdownNow()}, a
   * lease-loss interrupt) still releases, and keeps its interrupt: the next client gets the lock
   * long before the ttl.
   */
  @Test
  void anInterruptedHolderStillReleases() throws Exception {
    LockService a = client();
    LockService b = client();
    String r = resource("interrupted");
    Lease lease = a.acquire(r, Duration.ofSeconds(30), NO_HANG);
    Thread.currentThread().interrupt();
    try {
      lease.release();
      assertTrue(Thread.currentThread().isInterrupted(), "release kept the interrupt");
    } finally {
      Thread.interrupted();
    }
    Lease next =
        assertTimeoutPreemptively(NO_HANG, () -> b.acquire(r, shortTtl(), Duration.ofSeconds(10)));
    next.release();
  }

  @Test
  void anExpiredHolderCanNeitherReleaseNorExtendTheNextOwnersLock() throws Exception {
    LockService a = client();
    LockService b = client();
    LockService c = client();
    String r = resource("stale");
    Lease stale = a.acquire(r, shortTtl(), NO_HANG);
    waitOut(stale);
    Lease owner = b.acquire(r, Duration.ofSeconds(10), NO_HANG);
    assertFalse(stale.extend(Duration.ofSeconds(10)), "an expired lease is never extended");
    stale.release(); // owner-checked: B's lock stays
    assertTrue(c.tryAcquire(r, Duration.ofSeconds(10)).isEmpty(), "B still holds it");
    assertTrue(owner.isValid());
    assertTrue(owner.extend(Duration.ofSeconds(10)), "the owner extends");
    owner.release();
  }

  @Test
  void twoRacingForOneResourceExactlyOneWins() throws Exception {
    LockService a = client();
    LockService b = client();
    String r = resource("race");
    // Warm both up first: the race is about the store's decision, not about connecting.
    a.acquire(resource("warm-a"), Duration.ofSeconds(10), NO_HANG).release();
    b.acquire(resource("warm-b"), Duration.ofSeconds(10), NO_HANG).release();
    CyclicBarrier start = new CyclicBarrier(2);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<Optional<Lease>>> tries = new ArrayList<>();
      for (LockService s : List.of(a, b)) {
        tries.add(
            pool.submit(
                () -> {
                  start.await();
                  try {
                    return s.tryAcquire(r, Duration.ofSeconds(10));
                  } catch (LockUnavailableException e) {
                    return Optional.<Lease>empty();
                  }
                }));
      }
      // Both answers first: releasing the winner before the other has answered would let it win.
      List<Lease> winners = new ArrayList<>();
      for (Future<Optional<Lease>> t : tries) {
        t.get(NO_HANG.toSeconds(), TimeUnit.SECONDS).ifPresent(winners::add);
      }
      int won = winners.size();
      winners.forEach(Lease::release);
      assertEquals(1, won, "exactly one of two racing clients wins");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void manyClientsAndThreadsNeverOverlap() throws Exception {
    List<LockService> services = List.of(client(), client(), client());
    OverlapDetector detector = new OverlapDetector();
    AtomicInteger grants = new AtomicInteger();
    List<Long> tokens = new ArrayList<>();
    String r = resource("contended");
    ExecutorService pool = Executors.newFixedThreadPool(6);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < 6; w++) {
        LockService s = services.get(w % 3);
        String who = "worker" + w;
        workers.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 10; i++) {
                    try (Lease lease = s.acquire(r, Duration.ofSeconds(10), NO_HANG)) {
                      detector.enter(r, who);
                      synchronized (tokens) {
                        tokens.add(lease.fencingToken());
                      }
                      grants.incrementAndGet();
                      detector.exit(r, who);
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : workers) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(List.of(), detector.violations());
    assertEquals(60, grants.get());
    for (int i = 1; i < tokens.size(); i++) {
      assertTrue(tokens.get(i) > tokens.get(i - 1), "tokens in grant order: " + tokens);
    }
  }

  @Test
  void withLockRenewsWhileTheTaskRunsAndReleasesAfter() throws Exception {
    LockService a = client();
    LockService b = client();
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
                assertTrue(b.tryAcquire(r, Duration.ofSeconds(10)).isEmpty(), "still held");
                lease.checkValid();
                LockSupport.parkNanos(ttl.toNanos() / 4); // the task's own work
              }
              return "done";
            });
    assertEquals("done", result);
    Lease after = b.acquire(r, Duration.ofSeconds(10), NO_HANG);
    after.release();
  }

  @Test
  void aStoreCutOffMidTaskLosesTheLeaseAndTellsTheTask() throws Exception {
    LockService a = client();
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
                        Thread.sleep(10); // interrupted when the lease is lost
                      }
                    }));
    assertTrue(
        thrown instanceof LeaseLostException || thrown instanceof InterruptedException,
        thrown.toString());
    LeaseLostException loss = signalled.get(NO_HANG.toSeconds(), TimeUnit.SECONDS);
    assertTrue(
        loss.reason() == LeaseLostException.Reason.RENEWAL_FAILED
            || loss.reason() == LeaseLostException.Reason.EXPIRED,
        loss.toString());
    // The loss interrupt may still be set on this thread if the task saw the loss through
    // checkValid first (withLock does not clear it: docs/leases.md); it must not break the test's
    // own clean-up.
    Thread.interrupted();
    reconnect();
  }

  @Test
  void resourcesAreCaseSensitive() throws Exception {
    LockService a = client();
    Lease upper = a.acquire(resource("Case"), Duration.ofSeconds(10), NO_HANG);
    Lease lower =
        a.tryAcquire(resource("case"), Duration.ofSeconds(10))
            .orElseThrow(() -> new AssertionError("'case' is not 'Case'"));
    assertTrue(upper.isValid() && lower.isValid(), "two resources, two leases");
    upper.release();
    lower.release();
  }

  @Test
  void badInputIsRefusedEarlyWithTheRule() {
    LockService a = client();
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
}
