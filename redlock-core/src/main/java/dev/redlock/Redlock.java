package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import dev.redlock.config.TaskInterruption;
import dev.redlock.internal.IoThreads;
import dev.redlock.node.LockNode;
import dev.redlock.node.NodeKeys;
import dev.redlock.node.NodeUri;
import dev.redlock.quorum.QuorumStore;
import dev.redlock.spi.LeaseStore;
import dev.redlock.timing.Ticker;
import dev.redlock.timing.Watchdog;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.function.Function;

/**
 * A distributed lock over N independent Redis nodes, or over another {@link LeaseStore} ({@link
 * RedlockConfig.Builder#store}): the entry point of this library. Leases mean the same over every
 * store: validity on this JVM's monotonic clock from before the store was asked, renewal, the
 * lost-lease signal, growing fencing tokens.
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
 * once; stop waiting as soon as the outcome is decided; the lease is won if a quorum said yes and
 * validity ({@code ttl - elapsed - drift}) is left, else it is rolled back on every node that may
 * hold the key (docs/design.md).
 *
 * <p>Thread-safe: create one per application and share it. {@link #close()} releases what is held,
 * waits for the holders of kept-alive leases, and stops the threads and connections.
 */
public final class Redlock implements AutoCloseable {
  /** The most resources one lease may lock ({@link #tryAcquireAll}): one script runs over all. */
  public static final int MAX_RESOURCES = 64;

  private final RedlockConfig config;
  private final LeaseEngine<?> engine;
  private final Acquisitions<?> locks;
  private final List<LockNode> nodes;

  /** A Redlock over {@code nodes}: the quorum's store over them, its connections opening. */
  Redlock(RedlockConfig config, List<LockNode> nodes, ExecutorService io, Ticker ticker) {
    this(
        config,
        nodes,
        ticker,
        watchdog -> {
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
        });
  }

  /** The lease lifecycle over the store {@code store} makes, which this Redlock owns. */
  private Redlock(
      RedlockConfig config,
      List<LockNode> nodes,
      Ticker ticker,
      Function<Watchdog, LeaseStore<?>> store) {
    Watchdog watchdog = new Watchdog(ticker);
    this.config = config;
    this.nodes = List.copyOf(nodes);
    this.engine = new LeaseEngine<>(config, store.apply(watchdog), ticker, watchdog);
    this.locks = new Acquisitions<>(engine);
  }

  /**
   * Creates a Redlock and returns at once, connecting to each node in the background. The first
   * attempt waits for those connections (at most {@link RedlockConfig#connectTimeout()}, and a node
   * timeout more once a quorum is connected). A node that is down costs its vote until it is back.
   *
   * <p>With a {@linkplain RedlockConfig.Builder#store store}, it calls the store's function once
   * with {@link RedlockConfig#nodeTimeout()} and owns the store ({@link #close()} closes it); what
   * that function throws is thrown here.
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
      return new Redlock(config, List.of(), Ticker.SYSTEM, watchdog -> store);
    }
    NodeKeys keys =
        NodeKeys.of(
            config.keyPrefix(),
            config.maxTtl().toMillis(),
            config.restartGuard() != RestartGuard.OFF,
            config.restartGuard() == RestartGuard.TRUST_FSYNCED_AOF_RESTARTS);
    ExecutorService io = IoThreads.create(config.nodes().size() * IoThreads.PER_NODE);
    List<LockNode> nodes =
        config.connectionUris().stream()
            .map(NodeUri::parse) // as the config checked it: credentials included
            .map(
                uri ->
                    LockNode.connect(
                        uri,
                        config.nodeTimeout(),
                        config.connectTimeout(),
                        config.maxConnectionsPerNode(),
                        keys,
                        config.tlsSocketFactory().orElse(null),
                        io))
            .toList();
    return new Redlock(config, nodes, io, Ticker.SYSTEM);
  }

  /**
   * {@link #tryAcquire} without the calling thread waiting: one attempt on one of 4 library
   * threads. The future holds the lease, or empty if the lock is held elsewhere, or fails with what
   * {@link #tryAcquire} throws ({@link IllegalStateException} if the Redlock closes first; {@link
   * RedlockException} if 4,096 asynchronous acquisitions are pending already). It completes on the
   * Redlock's 8 callback threads, never an attempt or timer thread: chain blocking work to an
   * executor of yours. Completing it yourself (cancel, {@code orTimeout}) interrupts an attempt in
   * flight, which rolls back; a lease won meanwhile is released. Cancel this future, not one
   * derived from it: if {@code cancel} returns false, it holds a lease you must release.
   *
   * @param resource the name of the thing to lock
   * @param ttl how long the store keeps the lock if it is never released
   * @return the future lease, or empty if the lock is held elsewhere
   * @throws IllegalArgumentException for a blank resource or a bad ttl (at once, not in the future)
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if this Redlock is closed
   */
  public CompletableFuture<Optional<Lease>> tryAcquireAsync(String resource, Duration ttl) {
    return locks.tryAcquireAsync(resource, ttl);
  }

  /**
   * {@link #acquire} without a thread waiting between attempts: each attempt runs as in {@link
   * #tryAcquireAsync}, a timer starts the next after {@code retryDelay} plus jitter. The future
   * holds the lease, or fails with {@link LockUnavailableException} once {@code maxWait} is spent
   * (or as {@link #tryAcquireAsync} says). Completing it yourself stops the retries and interrupts
   * an attempt in flight (rolled back within about {@code nodeTimeout}); a lease won meanwhile is
   * released.
   *
   * @param resource the name of the thing to lock
   * @param ttl how long the store keeps the lock if it is never released
   * @param maxWait how long to keep trying; zero means one attempt
   * @return the future lease
   * @throws IllegalArgumentException for a blank resource, a bad ttl or a negative maxWait, at once
   * @throws NullPointerException if an argument is null
   * @throws IllegalStateException if this Redlock is closed
   */
  public CompletableFuture<Lease> acquireAsync(String resource, Duration ttl, Duration maxWait) {
    return locks.acquireAsync(resource, ttl, maxWait);
  }

  /**
   * Acquires as {@link #acquireAsync}, calls {@code task} with the lease, renews it until the
   * task's stage completes, and releases it in every case. The future holds the stage's value, or
   * fails with the stage's error (a loss attached as suppressed), or, if the stage succeeded while
   * the lease was lost or released by {@link #close}, with {@link LeaseLostException} or {@link
   * IllegalStateException}. A loss cancels the stage unless {@code taskInterruption} is {@code
   * NEVER}. {@code task} runs, and the lease is released, on the callback threads: return a stage,
   * do not block. Completing the future before the lock is won stops the acquisition; after, only
   * the stage (and {@code maxHold}) ends the task.
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
  public <T> CompletableFuture<T> withLockAsync(
      String resource,
      Duration ttl,
      Duration maxWait,
      Function<? super Lease, ? extends CompletionStage<T>> task) {
    return locks.withLockAsync(resource, ttl, maxWait, task);
  }

  /**
   * A counting semaphore: at most {@code permits} of its leases valid at once, across every client
   * of the store, each permit a lease of one of the resources {@code name@permit:0} to {@code
   * name@permit:(permits - 1)} (see {@link Semaphore}). Cheap: it holds nothing.
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
    engine.ensureOpen();
    return new PermitSlots<>(engine, name, permits);
  }

  /** The configuration this Redlock was created with. */
  public RedlockConfig config() {
    return config;
  }

  /**
   * Makes one attempt to acquire the lock, without sleeping. Returns within about {@code
   * nodeTimeout} (twice that to roll back a straggling node), after waiting, if need be, for a new
   * Redlock's first connections and for a turn among {@code maxAttemptsInFlight}.
   *
   * @param resource the name of the thing to lock; the Redis key is {@code keyPrefix + resource}
   * @param ttl how long the nodes keep the lock if it is never released
   * @return the lease, or empty if the lock is held elsewhere
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code resource} is blank, or {@code ttl} is not positive
   *     or not larger than {@code nodeTimeout} plus the drift allowance
   * @throws LockUnavailableException if too few nodes answered ({@link Reason#QUORUM_UNREACHABLE})
   *     or too late ({@link Reason#VALIDITY_EXPIRED}), with the per-node account
   * @throws RedlockException if the thread was interrupted (the interrupt flag is set again)
   * @throws IllegalStateException if this Redlock is closed
   */
  public Optional<Lease> tryAcquire(String resource, Duration ttl) {
    return locks.tryAcquire(resource, ttl);
  }

  /**
   * Acquires the lock, retrying after {@code retryDelay} plus a random jitter until it is won or
   * {@code maxWait} is spent. Returns or throws within {@code maxWait} plus one attempt (and the
   * first attempt's waits, as {@link #tryAcquire}'s).
   *
   * @param resource the name of the thing to lock
   * @param ttl how long the nodes keep the lock if it is never released
   * @param maxWait how long to keep trying; zero means one attempt
   * @return the lease
   * @throws LockUnavailableException if not won in time, with the last attempt's account
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
   * Acquires the lock as {@link #acquire}, runs {@code task} while renewing the lease ({@link
   * Lease#keepAlive()}), and releases it in every case. If the lease is lost while the task runs,
   * {@link Lease#checkValid()} throws, the task's thread is interrupted once (unless it learned of
   * the loss from {@code checkValid()}, or {@link TaskInterruption#NEVER} is configured), and the
   * loss is attached as suppressed to whatever the task throws.
   *
   * @param resource the name of the thing to lock
   * @param ttl the lease's time to live, renewed every {@code ttl × renewalFraction}
   * @param maxWait how long to keep trying to acquire
   * @param task the work; may throw a checked exception
   * @return what the task returned
   * @throws E what the task threw, unchanged
   * @throws LockUnavailableException if not won within {@code maxWait}; the task did not run
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
   * One attempt, without sleeping, to lock every one of {@code resources} at once, all or none:
   * each node takes every key or none, so overlapping sets refuse each other but never wait for
   * each other. Otherwise as {@link #tryAcquire}, on the same keys, so a lease of one resource and
   * of a set holding it exclude each other. The lease has one fencing token, larger than every
   * earlier token of each resource (docs/design.md, "Several resources at once").
   *
   * @param resources the names to lock, 1 to {@link #MAX_RESOURCES} of them
   * @param ttl how long the nodes keep every key if the lease is never released
   * @return the lease, or empty if any of the resources is held elsewhere (none is then taken)
   * @throws NullPointerException if an argument is null, or {@code resources} contains null
   * @throws IllegalArgumentException if {@code resources} is empty, holds more than {@link
   *     #MAX_RESOURCES} names, a name {@link #tryAcquire} refuses, or one name twice (a set whose
   *     equality is not {@link String#equals}); or for a bad ttl
   * @throws LockUnavailableException as {@link #tryAcquire}, naming the sorted set
   * @throws UnsupportedOperationException if the store cannot lock several resources at once
   * @throws RedlockException if the thread was interrupted (the interrupt flag is set again)
   * @throws IllegalStateException if this Redlock is closed
   */
  public Optional<Lease> tryAcquireAll(Set<String> resources, Duration ttl) {
    return locks.tryAcquireAll(resources, ttl);
  }

  /**
   * Locks every one of {@code resources} at once ({@link #tryAcquireAll}), retrying as {@link
   * #acquire} until it is won or {@code maxWait} is spent.
   *
   * @param resources the names to lock, 1 to {@link #MAX_RESOURCES} of them
   * @param ttl how long the nodes keep every key if the lease is never released
   * @param maxWait how long to keep trying; zero means one attempt
   * @return the lease of the whole set
   * @throws LockUnavailableException if the set was not won in time, as {@link #acquire}
   * @throws InterruptedException if the thread was interrupted while waiting; nothing is held
   * @throws NullPointerException as {@link #tryAcquireAll}, or if {@code maxWait} is null
   * @throws IllegalArgumentException as {@link #tryAcquireAll}, or for a negative {@code maxWait}
   * @throws UnsupportedOperationException as {@link #tryAcquireAll}
   * @throws IllegalStateException if this Redlock is closed
   */
  public Lease acquireAll(Set<String> resources, Duration ttl, Duration maxWait)
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
   * @throws LockUnavailableException if not won within {@code maxWait}; the task did not run
   * @throws InterruptedException if interrupted while waiting to acquire; the task did not run
   * @throws NullPointerException as {@link #acquireAll}, or if {@code task} is null
   * @throws IllegalArgumentException as {@link #acquireAll}, or for a ttl too short to renew
   * @throws UnsupportedOperationException as {@link #tryAcquireAll}
   * @throws IllegalStateException if this Redlock is closed
   */
  public <T, E extends Exception> T withLockAll(
      Set<String> resources, Duration ttl, Duration maxWait, LeaseTask<T, E> task)
      throws E, InterruptedException {
    return locks.withLockAll(resources, ttl, maxWait, task);
  }

  /**
   * The read-write lock named {@code name}: many readers or one writer, with writer preference and
   * one fencing counter for both sides ({@link ReadWriteLock}). Its keys ({@code keyPrefix +
   * "@rw:w:" + name}, {@code "@rw:r:"}, {@code "@rw:i:"}) are apart from every plain lock's.
   *
   * @param name the lock's name: not blank, and one {@link #tryAcquire} accepts as a resource
   * @return the lock (holds nothing until a side is acquired)
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is blank or a reserved name (see {@link
   *     #tryAcquire})
   * @throws UnsupportedOperationException if the store has no read-write locks ({@link
   *     LeaseStore#hasReadWriteLocks}); both of this library's stores have them
   * @throws IllegalStateException if this Redlock is closed
   */
  public ReadWriteLock readWriteLock(String name) {
    return locks.readWriteLock(name);
  }

  /**
   * Refuses new acquisitions, releases every lease nobody keeps alive (waiting about {@code
   * nodeTimeout} for the nodes), then closes the connections and threads, or the {@linkplain
   * RedlockConfig.Builder#store store}. A kept-alive lease (every {@code withLock}'s, and any after
   * {@link Lease#keepAlive()}) is never freed under its holder: renewal stops, and close waits
   * until the holder releases it or its validity runs out, when it is lost as on any loss (the task
   * interrupted, {@code onLost} called). So close may take up to the longest such validity left; an
   * extend after close is refused. Called from a {@code withLock} task, it gives that task's own
   * lease back at once. Idempotent; after it, acquiring throws {@link IllegalStateException}.
   */
  @Override
  public void close() {
    engine.close();
  }

  /**
   * How many requests to each node are in flight: written, their reply not read yet. A gauge that
   * falls back to 0 when idle; a frozen node's requests stay in flight for about {@code
   * nodeTimeout}, then fail.
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
