package dev.redlock.testkit;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.RedlockException;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.WorkloadAttempts.Shape;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.UnaryOperator;

/**
 * Clients and threads taking locks on a few resources while a test applies faults; everything they
 * do goes into a {@link History}, judged by {@link HistoryChecker} at the end.
 *
 * <p>Each client is a {@link Redlock} of its own, reaching the nodes through links of its own
 * ({@link FaultyNodes#uris(String)}, named {@code client0, client1, ...}), so partitions can cut
 * some clients off some nodes. Each thread loops: one {@code tryAcquire} on a random resource; on a
 * grant, a guarded write to an in-memory register that refuses tokens older than the newest it has
 * accepted (or accepts all of them, {@link Builder#fencing(boolean) fencing off}), the hold, then
 * release.
 *
 * <pre>{@code
 * try (Workload workload = Workload.builder(nodes).clients(3).threadsPerClient(2).start();
 *     Nemesis nemesis = Nemesis.builder(nodes).seed(seed).maxFaulty(2).start()) {
 *   Workload.Result result = workload.runFor(Duration.ofSeconds(10));
 *   assertEquals(List.of(), result.violations());
 * }
 * }</pre>
 */
public final class Workload implements AutoCloseable {
  private final Builder options;
  private final List<Redlock> clients = new ArrayList<>();
  private final History history = new History();
  private final WorkloadAttempts attempts;
  private final CriticalSection criticalSection;

  /** The name of the semaphore of a {@link Builder#semaphore} workload. */
  public static final String SEMAPHORE = "workload:permits";

  private Workload(Builder options) {
    this.options = options;
    this.attempts = new WorkloadAttempts(options);
    this.criticalSection = new CriticalSection(options, history);
  }

  /** Starts describing a workload on {@code nodes}. */
  public static Builder builder(FaultyNodes nodes) {
    return new Builder(nodes);
  }

  /** Options of a {@link Workload}. */
  public static final class Builder {
    private final FaultyNodes nodes;
    private int clients = 2;
    private int threadsPerClient = 2;
    // Package-private: read by WorkloadAttempts and CriticalSection while the workload runs.
    int resources = 4;
    Duration ttl = Duration.ofSeconds(2);
    Duration hold = Duration.ZERO;
    boolean fencing = true;
    private boolean callerFaults;
    boolean multiResource;
    int permits;
    boolean readWrite;
    boolean mixed;
    private UnaryOperator<RedlockConfig.Builder> config = UnaryOperator.identity();

    private Builder(FaultyNodes nodes) {
      if (nodes == null) {
        throw new IllegalArgumentException("nodes must not be null");
      }
      this.nodes = nodes;
    }

    /** How many clients, each a {@link Redlock} with links of its own (default 2). */
    public Builder clients(int clients) {
      this.clients = positive("clients", clients);
      return this;
    }

    /** Threads per client (default 2). */
    public Builder threadsPerClient(int threads) {
      this.threadsPerClient = positive("threadsPerClient", threads);
      return this;
    }

    /** How many resources the threads contend for (default 4). */
    public Builder resources(int resources) {
      this.resources = positive("resources", resources);
      return this;
    }

    /** The lease ttl (default 2 s). */
    public Builder ttl(Duration ttl) {
      if (ttl == null || ttl.isNegative() || ttl.isZero()) {
        throw new IllegalArgumentException("ttl must be > 0, was " + ttl);
      }
      this.ttl = ttl;
      return this;
    }

    /** How long a holder keeps the lease after its write (default 0). */
    public Builder hold(Duration hold) {
      if (hold == null || hold.isNegative()) {
        throw new IllegalArgumentException("hold must be >= 0, was " + hold);
      }
      this.hold = hold;
      return this;
    }

    /**
     * Caller-side faults (default off): half of each client's threads wait for the lock ({@code
     * acquire} with a short maxWait) instead of one attempt, and an interrupter thread interrupts a
     * random workload thread every 5–40 ms, wherever it is — sending, waiting for replies or
     * between retries, holding, releasing — as {@code Future.cancel(true)} and {@code
     * shutdownNow()} do. The thread takes the interrupt, clears it and goes on; {@link
     * Result#interrupted()} counts them.
     */
    public Builder callerFaults(boolean callerFaults) {
      this.callerFaults = callerFaults;
      return this;
    }

    /**
     * Multi-resource leases (default off): half of the attempts ask for a set of 2 or 3 of the
     * resources at once ({@link Redlock#tryAcquireAll}, or {@code acquireAll} for the waiting
     * threads), built in a random order, the rest for one resource. Each grant and write is
     * recorded per resource, so the checker judges a set's resources one by one against every other
     * lease of them, single or multi.
     */
    public Builder multiResource(boolean multiResource) {
      this.multiResource = multiResource;
      return this;
    }

    /**
     * Semaphore permits (default 0: off): every attempt asks for a permit of one semaphore of
     * {@code permits} permits ({@code Semaphore.tryAcquire}, or {@code acquire} for the waiting
     * threads), made by each client ({@link #SEMAPHORE} is its name). Each grant is recorded with
     * {@link History#permitGranted}, so the checker holds the semaphore to at most {@code permits}
     * holders at once, and each permit to one; the register keeps each permit's tokens apart
     * (tokens order the holders of one permit). Give the holders a {@link #hold} so that permits
     * are held side by side.
     */
    public Builder semaphore(int permits) {
      this.permits = positive("permits", permits);
      return this;
    }

    /**
     * Read-write locks (default off): every attempt takes a side of one of the {@link #resources}
     * read-write locks ({@code "workload-rw:<i>"}, {@link Redlock#readWriteLock}), a writer one
     * time in four, else a reader; odd threads wait ({@code acquire}, so that writers leave their
     * intent mark), even ones try once. Read grants are recorded as {@link History.Op#READ_GRANT}
     * and write nothing; writers make the guarded write. The checker then judges writers alone.
     */
    public Builder readWrite(boolean readWrite) {
      this.readWrite = readWrite;
      return this;
    }

    /**
     * A mixed workload (default off): each attempt picks one of the four shapes at random — a lock
     * of one resource, a set of 2 or 3 of them ({@link Redlock#tryAcquireAll}), a permit of the
     * semaphore of {@code permits} permits ({@link #SEMAPHORE}), a side of one of two read-write
     * locks (a writer one time in four) — and odd threads wait for it ({@code acquire}) where even
     * ones try once. Each grant is recorded as in that shape's own mode, so one history holds every
     * shape and the checker judges them together: at most one holder per resource (single locks and
     * sets share the resources), at most {@code permits} holders of the semaphore, writers alone.
     * Give the holders a {@link #hold} so that permits and reads are held side by side.
     */
    public Builder mixed(int permits) {
      this.permits = positive("permits", permits);
      this.mixed = true;
      return this;
    }

    /** Whether the register refuses stale tokens (default true). */
    public Builder fencing(boolean fencing) {
      this.fencing = fencing;
      return this;
    }

    /**
     * Adjusts each client's configuration (its nodes are already set): timeouts, drift, and so on.
     */
    public Builder config(UnaryOperator<RedlockConfig.Builder> config) {
      if (config == null) {
        throw new IllegalArgumentException("config must not be null");
      }
      this.config = config;
      return this;
    }

    /** Creates the clients (and their links); nothing runs until {@link #runFor}. */
    public Workload start() {
      Workload workload = new Workload(this);
      try {
        for (int c = 0; c < clients; c++) {
          workload.clients.add(
              Redlock.create(
                  config.apply(RedlockConfig.builder().nodes(nodes.uris("client" + c))).build()));
        }
        return workload;
      } catch (RuntimeException e) {
        workload.close();
        throw e;
      }
    }

    private static int positive(String name, int value) {
      if (value < 1) {
        throw new IllegalArgumentException(name + " must be >= 1, was " + value);
      }
      return value;
    }
  }

  /**
   * What a run did.
   *
   * @param grants leases granted
   * @param grantsByShape the grants by what they were: {@code lock}, {@code set}, {@code permit},
   *     {@code read}, {@code write} (the shapes the run asked for)
   * @param busy attempts that found the lock held elsewhere (contention, not failure)
   * @param unavailable attempts that failed for another reason, by reason
   * @param refusedWrites guarded writes the register refused (a stale token stopped)
   * @param grantLatencyMicros the latency of each granting attempt, sorted
   * @param failureLatencyMicros the latency of each failed attempt (not busy), sorted
   * @param interrupted workload threads interrupted by the caller faults (0 without them)
   * @param violations what the history checker found
   * @param sampleFailures the messages of the first few failed attempts (the per-node account)
   * @param history everything the clients did
   */
  public record Result(
      int grants,
      Map<String, Integer> grantsByShape,
      int busy,
      Map<LockUnavailableException.Reason, Integer> unavailable,
      int refusedWrites,
      List<Long> grantLatencyMicros,
      List<Long> failureLatencyMicros,
      int interrupted,
      List<String> violations,
      List<String> sampleFailures,
      History history) {
    /** Attempts that failed for a reason other than contention. */
    public int failures() {
      return unavailable.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** The {@code q}-quantile (0..1) of the granting attempts' latency, in µs; 0 when none. */
    public long grantLatencyMicros(double q) {
      return quantile(grantLatencyMicros, q);
    }

    /** The {@code q}-quantile (0..1) of the failed attempts' latency, in µs; 0 when none. */
    public long failureLatencyMicros(double q) {
      return quantile(failureLatencyMicros, q);
    }

    private static long quantile(List<Long> sorted, double q) {
      if (sorted.isEmpty()) {
        return 0;
      }
      return sorted.get((int) Math.min(sorted.size() - 1, Math.floor(q * sorted.size())));
    }
  }

  /**
   * Runs every client thread for {@code duration}, then judges the history.
   *
   * @throws IllegalStateException if a client thread failed unexpectedly
   */
  public Result runFor(Duration duration) throws InterruptedException {
    long end = System.nanoTime() + duration.toNanos();
    Map<Shape, AtomicInteger> byShape = new EnumMap<>(Shape.class);
    for (Shape shape : Shape.values()) {
      byShape.put(shape, new AtomicInteger());
    }
    AtomicInteger busy = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    AtomicInteger interrupted = new AtomicInteger();
    Map<LockUnavailableException.Reason, Integer> unavailable =
        new EnumMap<>(LockUnavailableException.Reason.class);
    List<Long> grantLatency = Collections.synchronizedList(new ArrayList<>());
    List<Long> failureLatency = Collections.synchronizedList(new ArrayList<>());
    List<String> samples = Collections.synchronizedList(new ArrayList<>());
    List<Thread> workers = new java.util.concurrent.CopyOnWriteArrayList<>();
    int threads = clients.size() * options.threadsPerClient;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    Thread interrupter = options.callerFaults ? interrupter(workers, end) : null;
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int c = 0; c < clients.size(); c++) {
        for (int t = 0; t < options.threadsPerClient; t++) {
          Redlock client = clients.get(c);
          dev.redlock.Semaphore semaphore =
              options.permits > 0 ? client.semaphore(SEMAPHORE, options.permits) : null;
          String name = "client" + c + "-thread" + t;
          boolean waits =
              (options.callerFaults || options.readWrite || options.mixed) && t % 2 == 1;
          running.add(
              pool.submit(
                  () -> {
                    workers.add(Thread.currentThread());
                    while (System.nanoTime() < end) {
                      Shape shape = attempts.nextShape();
                      long start = System.nanoTime();
                      try {
                        Optional<Lease> lease = attempts.attempt(client, semaphore, shape, waits);
                        if (lease.isEmpty()) {
                          busy.incrementAndGet();
                          backOff(1, 3);
                          continue;
                        }
                        grantLatency.add((System.nanoTime() - start) / 1_000);
                        byShape.get(shape).incrementAndGet();
                        if (shape == Shape.READ) {
                          criticalSection.holdRead(name, lease.get());
                        } else if (!criticalSection.hold(
                            name, lease.get(), shape == Shape.PERMIT)) {
                          refused.incrementAndGet();
                        }
                      } catch (LockUnavailableException e) {
                        if (e.reason() == LockUnavailableException.Reason.HELD_ELSEWHERE) {
                          busy.incrementAndGet(); // a waiting acquire that timed out: contention
                          continue;
                        }
                        failureLatency.add((System.nanoTime() - start) / 1_000);
                        if (samples.size() < 5) {
                          samples.add(e.getMessage());
                        }
                        synchronized (unavailable) {
                          unavailable.merge(e.reason(), 1, Integer::sum);
                        }
                        backOff(5, 15);
                      } catch (InterruptedException | RedlockException e) {
                        if (!options.callerFaults
                            || !(e instanceof InterruptedException || Thread.interrupted())) {
                          throw e;
                        }
                        interrupted.incrementAndGet(); // a caller fault: taken, and on we go
                      }
                      if (Thread.interrupted()) {
                        interrupted.incrementAndGet(); // landed in the hold or the release
                      }
                    }
                    return null;
                  }));
        }
      }
      for (Future<?> f : running) {
        try {
          f.get(duration.toMillis() + TimeUnit.MINUTES.toMillis(2), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
          throw new IllegalStateException("a workload thread failed", e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
          throw new IllegalStateException("a workload thread did not finish", e);
        }
      }
    } finally {
      if (interrupter != null) {
        interrupter.interrupt();
        interrupter.join(TimeUnit.SECONDS.toMillis(5));
      }
      pool.shutdownNow();
    }
    List<Long> grantSorted = new ArrayList<>(grantLatency);
    Collections.sort(grantSorted);
    List<Long> failureSorted = new ArrayList<>(failureLatency);
    Collections.sort(failureSorted);
    Map<String, Integer> grantsByShape = new java.util.LinkedHashMap<>();
    byShape.forEach(
        (shape, count) -> {
          if (count.get() > 0) {
            grantsByShape.put(shape.name().toLowerCase(java.util.Locale.ROOT), count.get());
          }
        });
    return new Result(
        byShape.values().stream().mapToInt(AtomicInteger::get).sum(),
        Collections.unmodifiableMap(grantsByShape),
        busy.get(),
        Map.copyOf(unavailable),
        refused.get(),
        List.copyOf(grantSorted),
        List.copyOf(failureSorted),
        interrupted.get(),
        HistoryChecker.violations(history),
        List.copyOf(samples),
        history);
  }

  /** Interrupts a random worker every 5–40 ms until {@code end}. */
  private static Thread interrupter(List<Thread> workers, long end) {
    Thread thread =
        new Thread(
            () -> {
              while (System.nanoTime() < end && !Thread.currentThread().isInterrupted()) {
                backOff(5, 40);
                if (!workers.isEmpty()) {
                  workers.get(ThreadLocalRandom.current().nextInt(workers.size())).interrupt();
                }
              }
            },
            "workload-interrupter");
    thread.setDaemon(true);
    thread.start();
    return thread;
  }

  /**
   * Whether every client is granted {@code resource} now, asked one after the other (each lease
   * released at once); false at the first that is refused or fails. For a test that healed a fault
   * and must know the service is back for each client — each has links, connections and re-sent
   * releases of its own, so one client's grant says nothing about the others' — before it measures
   * a run: {@code await().atMost(timing.noHang()).until(() -> workload.everyClientIsGranted(...))}.
   */
  public boolean everyClientIsGranted(String resource, Duration ttl) {
    for (Redlock client : clients) {
      Optional<Lease> lease;
      try {
        lease = client.tryAcquire(resource, ttl);
      } catch (LockUnavailableException e) {
        return false;
      }
      if (lease.isEmpty()) {
        return false;
      }
      try {
        lease.get().release();
      } catch (RedlockException e) {
        // granted is what was asked; a release short of a quorum ends with the ttl
      }
    }
    return true;
  }

  /** Requests the clients have in flight now, over all nodes ({@link Redlock#requestsInFlight}). */
  public int requestsInFlight() {
    return clients.stream()
        .flatMap(c -> c.requestsInFlight().values().stream())
        .mapToInt(Integer::intValue)
        .sum();
  }

  /**
   * Waits, at most {@code max}, until the clients have no request in flight on their connections
   * (call it once the nodes are healed: a frozen node holds its requests up to the node timeout,
   * and re-sent releases keep writing to it); returns how many are still in flight then (0: every
   * connection came back).
   */
  public int awaitConnectionsBack(Duration max) {
    long deadline = System.nanoTime() + max.toNanos();
    int inUse;
    while ((inUse = requestsInFlight()) > 0 && System.nanoTime() < deadline) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
    return inUse;
  }

  private static void backOff(int minMillis, int maxMillis) {
    LockSupport.parkNanos(
        TimeUnit.MILLISECONDS.toNanos(
            ThreadLocalRandom.current().nextInt(minMillis, maxMillis + 1)));
  }

  /** Closes the clients (releasing what they still hold). */
  @Override
  public void close() {
    clients.forEach(Redlock::close);
  }
}
