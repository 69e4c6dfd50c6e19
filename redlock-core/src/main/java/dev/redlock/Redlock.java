package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.internal.IoThreads;
import dev.redlock.internal.Ticker;
import dev.redlock.node.LockNode;
import dev.redlock.node.NodeKeys;
import dev.redlock.quorum.QuorumStore;
import dev.redlock.spi.LeaseStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.function.Function;

/**
 * A distributed lock over N independent Redis nodes, or over another {@link LeaseStore} (a SQL
 * table, from {@code redlock-jdbc}; see {@link RedlockConfig.Builder#store}): the entry point of
 * this library. Leases mean the same thing over every store: validity measured on this JVM's
 * monotonic clock from before the store was asked, renewal and the lost-lease signal, fencing
 * tokens that grow. What follows says what the Redis nodes do; a store keeps its own rows.
 *
 * <pre>{@code
 * try (Redlock redlock = Redlock.create(config)) {
 *   try (Lease lease = redlock.acquire("ledger:2026-11-29", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *     settle(lease);
 *   }
 * }
 * }</pre>
 *
 * <p>One attempt: take a monotonic start time; send {@code SET key token NX PX ttl} to all nodes at
 * once; as soon as the outcome is decided stop waiting; the lease is won if a quorum said yes and
 * validity ({@code ttl - elapsed - drift}) is left. Otherwise the attempt is rolled back with an
 * owner-checked release on every node that may hold the key. See {@code docs/design.md} for the
 * argument; the vote itself is {@code QuorumStore.take}, and what a lease then goes through
 * (validity, retries, renewal, loss, release) is {@code LeaseEngine}, which any lease store shares.
 *
 * <p>Thread-safe: create one per application and share it; threads do not block each other except
 * on the nodes. {@link #close()} releases every lease still held and stops the I/O threads and
 * connections.
 */
public final class Redlock implements AutoCloseable {
  /**
   * The most resources one multi-resource lease may lock ({@link #tryAcquireAll}): each node runs
   * one script over all of them while every other request waits, so the set is kept small.
   */
  public static final int MAX_RESOURCES = 64;

  private final RedlockConfig config;
  private final LeaseEngine<?> engine;
  private final Acquisitions<?> locks;
  private final List<LockNode> nodes;

  /** A Redlock over {@code nodes}: the quorum's store over them, its connections opening. */
  Redlock(RedlockConfig config, List<LockNode> nodes, ExecutorService io, Ticker ticker) {
    this(config, nodes, new Watchdog(ticker), io, ticker);
  }

  private Redlock(
      RedlockConfig config,
      List<LockNode> nodes,
      Watchdog watchdog,
      ExecutorService io,
      Ticker ticker) {
    this(config, nodes, quorumStore(config, nodes, io, ticker, watchdog), watchdog, ticker);
  }

  /**
   * The one path every Redlock takes: the lease lifecycle ({@link LeaseEngine}) over {@code store},
   * which it owns from now on, with {@code watchdog}'s timers.
   */
  private Redlock(
      RedlockConfig config,
      List<LockNode> nodes,
      LeaseStore<?> store,
      Watchdog watchdog,
      Ticker ticker) {
    this.config = config;
    this.nodes = List.copyOf(nodes);
    this.engine = engine(config, store, watchdog, ticker);
    this.locks = new Acquisitions<>(engine);
  }

  private static <H extends LeaseStore.Held> LeaseEngine<H> engine(
      RedlockConfig config, LeaseStore<H> store, Watchdog watchdog, Ticker ticker) {
    return new LeaseEngine<>("Redlock", config, store, ticker, watchdog);
  }

  private static QuorumStore quorumStore(
      RedlockConfig config,
      List<LockNode> nodes,
      ExecutorService io,
      Ticker ticker,
      Watchdog watchdog) {
    QuorumStore store =
        new QuorumStore(
            config.quorum(),
            config.keyPrefix(),
            config.nodeTimeout(),
            config.maxTtl(),
            config.connectTimeout(),
            nodes,
            io,
            ticker,
            watchdog);
    store.openConnections();
    return store;
  }

  /**
   * Creates a Redlock over the configured nodes and starts connecting to each in the background; it
   * returns at once. The first attempt waits for those first connections (bounded by {@link
   * RedlockConfig#connectTimeout()}, and by a node timeout more once a quorum is connected), so a
   * one-shot job's only {@code tryAcquire} is not lost to connection setup. A node that is down now
   * only costs its vote until it comes back.
   *
   * <p>With a {@linkplain RedlockConfig.Builder#store store} instead of nodes, it calls the store's
   * function once, with {@link RedlockConfig#nodeTimeout()}, and owns the store it returns ({@link
   * #close()} closes it); what that function throws (a missing table, say) is thrown here.
   *
   * @throws NullPointerException if {@code config} is null, or its store's function returns null
   */
  public static Redlock create(RedlockConfig config) {
    Objects.requireNonNull(config, "config must not be null");
    Optional<Function<Duration, ? extends LeaseStore<?>>> storeFunction = config.store();
    if (storeFunction.isPresent()) {
      LeaseStore<?> store =
          Objects.requireNonNull(
              storeFunction.get().apply(config.nodeTimeout()),
              () -> "store returned null, it must return the LeaseStore: " + storeFunction.get());
      Ticker ticker = Ticker.SYSTEM;
      return new Redlock(config, List.of(), store, new Watchdog(ticker), ticker);
    }
    List<LockNode> nodes = new ArrayList<>();
    NodeKeys keys =
        NodeKeys.of(
            config.keyPrefix(),
            config.maxTtl().toMillis(),
            config.restartGuard() != RestartGuard.OFF,
            config.restartGuard() == RestartGuard.TRUST_FSYNCED_AOF_RESTARTS);
    ExecutorService io = IoThreads.create(config.nodeUris().size() * IoThreads.PER_NODE);
    config
        .nodeUris()
        .forEach(
            uri ->
                nodes.add(
                    LockNode.connect(
                        uri,
                        config.nodeTimeout(),
                        config.connectTimeout(),
                        config.maxConnectionsPerNode(),
                        keys,
                        config.tlsSocketFactory().orElse(null),
                        io)));
    return new Redlock(config, nodes, io, Ticker.SYSTEM);
  }

  /**
   * {@link #tryAcquire}, without the calling thread waiting: one attempt, run on one of a few
   * library threads (4 per Redlock). The future holds the lease, or empty if the lock is held
   * elsewhere, or fails with what {@link #tryAcquire} throws ({@link LockUnavailableException} and
   * its reason; {@link IllegalStateException} if the Redlock closes first; {@link RedlockException}
   * if 4,096 asynchronous acquisitions are pending already). It is completed on the Redlock's
   * callback threads (where {@code onLost} callbacks and listener events run; 8 per Redlock), never
   * on an attempt or timer thread: chain to it with the {@code *Async} methods and an executor of
   * yours for work that blocks. Completing it yourself (cancel, {@code orTimeout}) interrupts an
   * attempt in flight, which rolls back what it sent; a lease won as it completed is released.
   * Cancel the returned future itself, not one derived from it: if {@code cancel} returns false,
   * the future holds a lease you must release.
   *
   * @param resource the name of the thing to lock
   * @param ttl how long the store keeps the lock if it is never released
   * @return the future lease, or empty if the lock is held elsewhere
   * @throws IllegalArgumentException for a blank resource or a bad ttl (at once, not in the future)
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if this Redlock is closed
   */
  public java.util.concurrent.CompletableFuture<Optional<Lease>> tryAcquireAsync(
      String resource, Duration ttl) {
    return locks.tryAcquireAsync(resource, ttl);
  }

  /**
   * {@link #acquire}, without a thread waiting between attempts: each attempt runs on a library
   * thread (as in {@link #tryAcquireAsync}), and the lease timers start the next one after {@code
   * retryDelay} plus jitter. The future holds the lease, or fails with {@link
   * LockUnavailableException} once {@code maxWait} is spent (and as {@link #tryAcquireAsync} says).
   * Completing it yourself (cancel, {@code orTimeout}, {@code complete}) stops the retries and
   * interrupts an attempt in flight (rolled back, nothing held, within about {@code nodeTimeout});
   * a lease won as it completed is released. Same events and metrics as {@link #acquire}.
   *
   * @param resource the name of the thing to lock
   * @param ttl how long the store keeps the lock if it is never released
   * @param maxWait how long to keep trying; zero means one attempt
   * @return the future lease
   * @throws IllegalArgumentException for a blank resource, a bad ttl or a negative maxWait (at
   *     once)
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if this Redlock is closed
   */
  public java.util.concurrent.CompletableFuture<Lease> acquireAsync(
      String resource, Duration ttl, Duration maxWait) {
    return locks.acquireAsync(resource, ttl, maxWait);
  }

  /**
   * Acquires asynchronously ({@link #acquireAsync}), then calls {@code task} with the lease, renews
   * it until the stage {@code task} returns completes, and releases it in every case (the task
   * throws, returns null, its stage fails, or it succeeds). The future holds the stage's value; it
   * fails with the stage's error (the lease's loss, if it was lost, attached as suppressed), or, if
   * the stage succeeded while the lease was lost or released by {@link #close}, with {@link
   * LeaseLostException} or {@link IllegalStateException}: the work was not done under the lock
   * throughout. When the lease is lost and {@code taskInterruption} is {@code ON_LEASE_LOSS}, the
   * stage is cancelled (as {@link #withLock} interrupts its task). {@code task} is called, and the
   * lease released, on the Redlock's callback threads: return a stage rather than block there.
   * Completing the future before the lock is won stops the acquisition; after, nothing stops the
   * task but its stage (and {@code maxHold}, the bound on every lease's renewal).
   *
   * @param resource the name of the thing to lock
   * @param ttl the lease's time to live, renewed every {@code ttl × renewalFraction}
   * @param maxWait how long to keep trying to acquire
   * @param task the work, given the lease; returns the stage the lease is held until
   * @return the future value of the task's stage
   * @throws IllegalArgumentException for a bad argument, or a ttl too short to be renewed (at once)
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if this Redlock is closed
   */
  public <T> java.util.concurrent.CompletableFuture<T> withLockAsync(
      String resource,
      Duration ttl,
      Duration maxWait,
      java.util.function.Function<? super Lease, ? extends java.util.concurrent.CompletionStage<T>>
          task) {
    return locks.withLockAsync(resource, ttl, maxWait, task);
  }

  /**
   * A counting semaphore over this Redlock: at most {@code permits} of its leases valid at once,
   * across every client of the store. Each permit is a lease of this Redlock on one of the
   * resources {@code name@permit:0} to {@code name@permit:(permits - 1)}, with the mutex's rules
   * (quorum, ttl, renewal, owner check, restart guard, fencing token per permit, events, metrics);
   * {@link Semaphore} says what holds when clients use different numbers of permits for one name.
   * Cheap: it takes nothing and may be made per use.
   *
   * @param name the semaphore's name; not blank, without {@value Semaphore#PERMIT_MARK}
   * @param permits how many permits, 1 to {@link Semaphore#MAX_PERMITS}
   * @return the semaphore, whose {@code acquire} returns one permit's {@link Lease}
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException for a blank name, a name holding {@value
   *     Semaphore#PERMIT_MARK}, a number of permits out of range, or a name whose permits'
   *     resources the store refuses (as {@link #tryAcquire} would)
   * @throws IllegalStateException if this Redlock is closed
   */
  public Semaphore semaphore(String name, int permits) {
    return engine.semaphore(name, permits);
  }

  /** The configuration this Redlock was created with. */
  public RedlockConfig config() {
    return config;
  }

  /**
   * Makes one attempt to acquire the lock, without sleeping. Returns within about {@code
   * nodeTimeout} (twice that when it must roll back a straggling node); the first attempt of a new
   * Redlock may first wait for its connections, at most {@code connectTimeout}, and an attempt
   * beyond {@code maxAttemptsInFlight} of this client's waits its turn first (before its clock
   * starts: the wait costs no validity).
   *
   * @param resource the name of the thing to lock; the Redis key is {@code keyPrefix + resource}
   * @param ttl how long the nodes keep the lock if it is never released
   * @return the lease, or empty if the lock is held elsewhere
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code resource} is blank, or {@code ttl} is not positive
   *     or not larger than {@code nodeTimeout} plus the drift allowance
   * @throws LockUnavailableException if the attempt failed for another reason than contention: too
   *     few nodes answered ({@link Reason#QUORUM_UNREACHABLE}) or too late ({@link
   *     Reason#VALIDITY_EXPIRED}); it carries the per-node account
   * @throws RedlockException if the thread was interrupted (the interrupt flag is set again)
   * @throws IllegalStateException if this Redlock is closed
   */
  public Optional<Lease> tryAcquire(String resource, Duration ttl) {
    return locks.tryAcquire(resource, ttl);
  }

  /**
   * Acquires the lock, retrying after {@code retryDelay} plus a random jitter until it is won or
   * {@code maxWait} is spent. It returns or throws within {@code maxWait} plus one attempt (and,
   * for a new Redlock's first attempt, its wait for the first connections: see {@link #create};
   * and, with more than {@code maxAttemptsInFlight} of this client's attempts on the nodes, the
   * first attempt's wait for its turn, as {@link #tryAcquire}'s: a later attempt that has no turn
   * by {@code maxWait} is not made).
   *
   * @param resource the name of the thing to lock
   * @param ttl how long the nodes keep the lock if it is never released
   * @param maxWait how long to keep trying; zero means one attempt
   * @return the lease
   * @throws LockUnavailableException if the lock was not won in time; it says why and carries the
   *     last attempt's per-node account
   * @throws InterruptedException if the thread was interrupted while waiting; nothing is held
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException for a blank resource, a bad ttl (see {@link #tryAcquire}), or
   *     a negative {@code maxWait}
   * @throws IllegalStateException if this Redlock is closed
   */
  public Lease acquire(String resource, Duration ttl, Duration maxWait)
      throws InterruptedException {
    return locks.acquire(resource, ttl, maxWait);
  }

  /**
   * Acquires the lock, runs {@code task} with its lease while renewing the lease, and releases it
   * in every case. Waiting follows {@link #acquire}; renewal follows {@link Lease#keepAlive()}.
   *
   * <p>If the lease is lost while the task runs, {@link Lease#checkValid()} throws, the task's
   * thread is interrupted once unless it has already learned of the loss from {@code checkValid()}
   * (and unless {@link RedlockConfig#taskInterruption()} is {@link TaskInterruption#NEVER}), and
   * the loss is attached as a suppressed exception to whatever the task throws. The library never
   * pretends the lock is still held; what to do is the job's call.
   *
   * @param resource the name of the thing to lock
   * @param ttl the lease's time to live, renewed every {@code ttl × renewalFraction}
   * @param maxWait how long to keep trying to acquire
   * @param task the work; may throw a checked exception
   * @return what the task returned
   * @throws E what the task threw, unchanged
   * @throws LockUnavailableException if the lock was not won within {@code maxWait}; the task did
   *     not run
   * @throws InterruptedException if interrupted while waiting to acquire; the task did not run
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException for a blank resource, a bad ttl or maxWait, or a ttl too short
   *     to renew (see {@link Lease#keepAlive()})
   * @throws IllegalStateException if this Redlock is closed
   */
  public <T, E extends Exception> T withLock(
      String resource, Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException {
    return locks.withLock(resource, ttl, maxWait, task);
  }

  /**
   * One attempt, without sleeping, to lock every one of {@code resources} at once, all or none.
   * Each node runs one script that takes every key or none (the restart guard first, as for one
   * resource), so no node ever holds part of the set, and two clients asking for overlapping sets
   * in any order can refuse each other but never wait for each other. The vote is counted, the
   * validity computed and a lost attempt rolled back exactly as for one resource; the keys are
   * {@code keyPrefix + resource}, the ones {@link #tryAcquire} uses, so a lease of one resource and
   * a lease of a set holding it exclude each other. The lease has one fencing token, larger than
   * every earlier token of each of the resources ({@link Lease#fencingToken(String)}).
   *
   * @param resources the names to lock, 1 to {@link #MAX_RESOURCES} of them
   * @param ttl how long the nodes keep every key if the lease is never released
   * @return the lease, or empty if any of the resources is held elsewhere (none is then taken)
   * @throws NullPointerException if {@code resources} or {@code ttl} is null, or {@code resources}
   *     contains null
   * @throws IllegalArgumentException if {@code resources} is empty, holds more than {@link
   *     #MAX_RESOURCES} names, a blank name, a name {@link #tryAcquire} refuses, or one name twice
   *     (a set whose equality is not {@link String#equals}); or for a bad ttl (see {@link
   *     #tryAcquire})
   * @throws LockUnavailableException if the attempt failed for another reason than contention, as
   *     {@link #tryAcquire}; its {@link LockUnavailableException#resource()} is the sorted set as
   *     text
   * @throws UnsupportedOperationException if the store cannot lock several resources at once; both
   *     of this library's stores can
   * @throws RedlockException if the thread was interrupted (the interrupt flag is set again)
   * @throws IllegalStateException if this Redlock is closed
   */
  public Optional<Lease> tryAcquireAll(java.util.Set<String> resources, Duration ttl) {
    return locks.tryAcquireAll(resources, ttl);
  }

  /**
   * Locks every one of {@code resources} at once ({@link #tryAcquireAll}), retrying after {@code
   * retryDelay} plus a random jitter until it is won or {@code maxWait} is spent, as {@link
   * #acquire}.
   *
   * @param resources the names to lock, 1 to {@link #MAX_RESOURCES} of them
   * @param ttl how long the nodes keep every key if the lease is never released
   * @param maxWait how long to keep trying; zero means one attempt
   * @return the lease of the whole set
   * @throws LockUnavailableException if the set was not won in time; it says why and carries the
   *     last attempt's per-node account
   * @throws InterruptedException if the thread was interrupted while waiting; nothing is held
   * @throws NullPointerException as {@link #tryAcquireAll}, or if {@code maxWait} is null
   * @throws IllegalArgumentException as {@link #tryAcquireAll}, or for a negative {@code maxWait}
   * @throws UnsupportedOperationException as {@link #tryAcquireAll}
   * @throws IllegalStateException if this Redlock is closed
   */
  public Lease acquireAll(java.util.Set<String> resources, Duration ttl, Duration maxWait)
      throws InterruptedException {
    return locks.acquireAll(resources, ttl, maxWait);
  }

  /**
   * Locks every one of {@code resources} at once ({@link #acquireAll}), runs {@code task} while
   * renewing the whole set, and releases it in every case, as {@link #withLock}.
   *
   * @param resources the names to lock, 1 to {@link #MAX_RESOURCES} of them
   * @param ttl the lease's time to live, renewed every {@code ttl × renewalFraction}
   * @param maxWait how long to keep trying to acquire
   * @param task the work; may throw a checked exception
   * @return what the task returned
   * @throws E what the task threw, unchanged
   * @throws LockUnavailableException if the set was not won within {@code maxWait}; the task did
   *     not run
   * @throws InterruptedException if interrupted while waiting to acquire; the task did not run
   * @throws NullPointerException as {@link #acquireAll}, or if {@code task} is null
   * @throws IllegalArgumentException as {@link #acquireAll}, or for a ttl too short to renew
   * @throws UnsupportedOperationException as {@link #tryAcquireAll}
   * @throws IllegalStateException if this Redlock is closed
   */
  public <T, E extends Exception> T withLockAll(
      java.util.Set<String> resources, Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException {
    return locks.withLockAll(resources, ttl, maxWait, task);
  }

  /**
   * The read-write lock named {@code name} on these nodes: many readers or one writer, with writer
   * preference and one fencing counter for both sides ({@link ReadWriteLock}). Each node runs one
   * script per attempt, the restart guard first as for a plain lock: a writer is refused there
   * while any unexpired reader entry or another writer is, a reader while a writer holds or waits.
   * A lease is valid only while a quorum keeps it, so a writer's quorum and any reader's share a
   * node that refused one of them. The keys are {@code keyPrefix + "@rw:w:" + name}, {@code
   * "@rw:r:"} and {@code "@rw:i:"} (writer, readers, intent mark), apart from every plain lock's.
   *
   * @param name the lock's name: not blank, and one {@link #tryAcquire} accepts as a resource
   * @return the lock (holds nothing until a side is acquired)
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is blank or a reserved name (see {@link
   *     #tryAcquire})
   * @throws UnsupportedOperationException if the store has no read-write locks ({@link
   *     LeaseStore#hasReadWriteLocks}); the message names the store. Both of this library's stores
   *     have them
   * @throws IllegalStateException if this Redlock is closed
   */
  public ReadWriteLock readWriteLock(String name) {
    return locks.readWriteLock(name);
  }

  /**
   * Releases every lease still held (waiting at most about {@code nodeTimeout} for the nodes), then
   * stops the I/O threads and closes all connections, or closes the {@linkplain
   * RedlockConfig.Builder#store store}. Idempotent; after it, acquiring throws {@link
   * IllegalStateException}.
   */
  @Override
  public void close() {
    engine.close();
  }

  /**
   * How many requests to each node are in flight right now: written, their reply not read yet
   * (connections are shared, so this counts requests, not connections). For monitoring (a gauge
   * that should fall back to 0 when the application is idle) and for tests that check nothing was
   * left behind after interrupts, cancellations or faults. A frozen node keeps its requests in
   * flight for about {@code nodeTimeout}; then its connection breaks and they fail.
   *
   * @return node URI (without credentials) to requests in flight, in the configured node order;
   *     empty over a {@linkplain RedlockConfig.Builder#store store}, which has no nodes
   */
  public Map<String, Integer> requestsInFlight() {
    Map<String, Integer> inFlight = new LinkedHashMap<>();
    for (LockNode node : nodes) {
      inFlight.put(node.name(), node.requestsInFlight());
    }
    return Collections.unmodifiableMap(inFlight);
  }

  @Override
  public String toString() {
    return "Redlock{"
        + config
            .store()
            .map(store -> "store=" + store)
            .orElseGet(() -> "nodes=" + config.nodes() + ", quorum=" + config.quorum())
        + ", held="
        + engine.heldCount()
        + (engine.isClosed() ? ", closed" : "")
        + "}";
  }
}
