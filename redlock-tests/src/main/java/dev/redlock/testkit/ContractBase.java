package dev.redlock.testkit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;

/** The hooks a store implements for {@link LeaseContract}, and what its cases share. */
abstract class ContractBase {
  /** This run's timing ({@link Timing#get()}): scale the store's ttls and timeouts with it. */
  protected static final Timing TIMING = Timing.get();

  /** Bound for "returns instead of hanging": {@link Timing#noHang()}. */
  protected static final Duration NO_HANG = TIMING.noHang();

  /** A ttl no test outlives: 10 s, scaled, at most the default {@code maxTtl}. */
  static final Duration LONG_TTL = atMostMaxTtl(TIMING.scaled(Duration.ofSeconds(10)));

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

  static Duration atMostMaxTtl(Duration ttl) {
    return ttl.compareTo(RedlockConfig.DEFAULT_MAX_TTL) < 0 ? ttl : RedlockConfig.DEFAULT_MAX_TTL;
  }

  /** Waits until {@code lease} has run out, on its own clock (bounded by {@link #NO_HANG}). */
  static void waitOut(Lease lease) {
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
  static void assertThroughout(Duration span, String what, BooleanSupplier check) {
    long until = System.nanoTime() + span.toNanos();
    do {
      assertTrue(check.getAsBoolean(), what);
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    } while (System.nanoTime() - until < 0);
    assertTrue(check.getAsBoolean(), what);
  }

  /** What each thread of {@link #onThreadsOfClients} does, as {@code who}, its {@code index}-th. */
  interface ThreadWork<C> {
    void run(C client, String who, int index) throws Exception;
  }

  /**
   * Runs {@code work} at once on {@code threadsPerClient} threads of each of {@code clients} new
   * clients (each seen through {@code perClient}, made on this thread), and waits for every thread,
   * each bounded by 2 minutes (scaled): the contended cases' harness.
   */
  <C> void onThreadsOfClients(
      int clients, int threadsPerClient, Function<Redlock, C> perClient, ThreadWork<C> work)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(clients * threadsPerClient);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int c = 0; c < clients; c++) {
        C client = perClient.apply(client());
        for (int t = 0; t < threadsPerClient; t++) {
          String who = "client" + c + "-thread" + t;
          int index = c * threadsPerClient + t;
          workers.add(
              pool.submit(
                  () -> {
                    work.run(client, who, index);
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
  static boolean refused(Redlock other, String r) {
    Optional<Lease> taken = other.tryAcquire(r, LONG_TTL);
    taken.ifPresent(Lease::release);
    return taken.isEmpty();
  }
}
