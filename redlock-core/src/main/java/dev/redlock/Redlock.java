package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.internal.Ballot;
import dev.redlock.internal.FanOut;
import dev.redlock.internal.IoThreads;
import dev.redlock.internal.JedisNode;
import dev.redlock.internal.LockNode;
import dev.redlock.internal.LockTokens;
import dev.redlock.internal.NodeKeys;
import dev.redlock.internal.NodeRequest;
import dev.redlock.internal.NodeRequest.Verb;
import dev.redlock.internal.Ticker;
import dev.redlock.internal.TokenHash;
import dev.redlock.internal.Validity;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A distributed lock over N independent Redis nodes: the entry point of this library.
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
 * argument.
 *
 * <p>Thread-safe: create one per application and share it; threads do not block each other except
 * on the nodes. {@link #close()} releases every lease still held and stops the I/O threads and
 * connections.
 */
public final class Redlock implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Redlock.class);
  private static final String HELD = "held by another owner";
  private static final String NOT_OWNER = "not the owner: expired or taken";

  private final RedlockConfig config;
  private final FanOut fanOut;
  private final ExecutorService io;
  private final Ticker ticker;
  private final LockTokens tokens = new LockTokens();
  private final long nodeTimeoutNanos;
  private final Set<QuorumLease> held = ConcurrentHashMap.newKeySet();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Watchdog watchdog;
  private final StragglerReleases stragglers;
  private final long[] quarantineLoggedAt;
  private final List<RedlockListener> listeners;

  Redlock(RedlockConfig config, List<LockNode> nodes, ExecutorService io, Ticker ticker) {
    this.config = config;
    this.io = io;
    this.ticker = ticker;
    this.nodeTimeoutNanos = config.nodeTimeout().toNanos();
    this.fanOut = new FanOut(nodes, io, ticker, nodeTimeoutNanos);
    this.watchdog = new Watchdog(ticker);
    this.stragglers = new StragglerReleases(nodes, watchdog, io, ticker, nodeTimeoutNanos);
    this.quarantineLoggedAt = new long[nodes.size()];
    this.listeners = config.listeners();
  }

  /**
   * Creates a Redlock over the configured nodes. No connection is opened yet: a node that is down
   * now only costs its vote until it comes back.
   *
   * @throws NullPointerException if {@code config} is null
   */
  public static Redlock create(RedlockConfig config) {
    Objects.requireNonNull(config, "config must not be null");
    List<LockNode> nodes = new ArrayList<>();
    NodeKeys keys =
        NodeKeys.of(config.keyPrefix(), config.maxTtl().toMillis(), config.restartGuard());
    config
        .nodeUris()
        .forEach(
            uri ->
                nodes.add(
                    new JedisNode(
                        uri, config.nodeTimeout(), config.maxConnectionsPerNode(), keys)));
    ExecutorService io = IoThreads.create(nodes.size() * config.maxConnectionsPerNode());
    return new Redlock(config, nodes, io, Ticker.SYSTEM);
  }

  /** The configuration this Redlock was created with. */
  public RedlockConfig config() {
    return config;
  }

  /**
   * Makes one attempt to acquire the lock, without sleeping. Returns within about {@code
   * nodeTimeout} (twice that when it must roll back a straggling node).
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
    Request request = request(resource, ttl);
    Attempt attempt;
    try {
      attempt = attempt(request);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RedlockException(
          "interrupted while acquiring '" + resource + "'; the attempt was rolled back", e);
    }
    if (attempt.lease != null) {
      return Optional.of(attempt.lease);
    }
    if (attempt.reason == Reason.HELD_ELSEWHERE) {
      return Optional.empty();
    }
    throw attempt.failure(request, 1, 0);
  }

  /**
   * Acquires the lock, retrying after {@code retryDelay} plus a random jitter until it is won or
   * {@code maxWait} is spent. It returns or throws within {@code maxWait} plus one attempt.
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
    Request request = request(resource, ttl);
    Objects.requireNonNull(maxWait, "maxWait must not be null");
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("maxWait must be >= 0, was " + maxWait);
    }
    long began = ticker.read();
    long giveUpAt = began + maxWait.toNanos();
    for (int attempts = 1; ; attempts++) {
      Attempt attempt = attempt(request);
      if (attempt.lease != null) {
        return attempt.lease;
      }
      long left = giveUpAt - ticker.read();
      if (left <= 0) {
        throw attempt.failure(request, attempts, ticker.read() - began);
      }
      TimeUnit.NANOSECONDS.sleep(Math.min(left, pauseNanos()));
    }
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
    Objects.requireNonNull(task, "task must not be null");
    ensureOpen();
    checkRenewable(ttl); // before acquiring: a lease we could not renew must not be taken at all
    QuorumLease lease = (QuorumLease) acquire(resource, ttl, maxWait);
    try {
      lease.keepAlive();
      if (config.taskInterruption() == TaskInterruption.ON_LEASE_LOSS) {
        lease.interruptOnLoss(Thread.currentThread());
      }
      return task.run(lease);
    } catch (Exception | Error e) {
      LeaseLostException loss = lease.lossOrNull();
      if (loss != null && loss != e) {
        e.addSuppressed(loss);
      }
      throw e;
    } finally {
      lease.interruptOnLoss(null); // from here on a loss must not interrupt this thread
      lease.release();
    }
  }

  /** One attempt of the algorithm: vote, count, compute validity, fence, keep or roll back. */
  private Attempt attempt(Request r) throws InterruptedException {
    String token = tokens.next();
    long start = ticker.read();
    emitAttempt(LockEvent.Kind.ATTEMPT, r.resource, 0, 0, null, null);
    Ballot votes =
        fanOut.send(new NodeRequest(Verb.ACQUIRE, r.key, token, r.ttlMillis), HELD, null, null);
    Ballot last = votes;
    int yes;
    try {
      yes = votes.awaitQuorum(config.quorum(), start + nodeTimeoutNanos);
      if (votes.quarantined() > 0) {
        logQuarantine(votes);
      }
      long validUntil = Validity.validUntil(start, r.ttlMillis, config.clockDriftFactor());
      if (yes >= config.quorum() && ticker.read() < validUntil) {
        Fence fence = fence(r, token, votes);
        last = fence.ballot;
        long now = ticker.read();
        if (fence.token > 0 && now < validUntil) {
          QuorumLease lease =
              new QuorumLease(
                  this,
                  r.resource,
                  r.key,
                  token,
                  r.ttlMillis,
                  start,
                  validUntil,
                  fence.token,
                  votes,
                  last);
          held.add(lease);
          emitLease(
              LockEvent.Kind.ACQUIRED,
              lease,
              validUntil - now,
              now - start,
              yes,
              null,
              votes::outcomes);
          if (log.isDebugEnabled()) { // the hot path: no argument array unless someone reads it
            log.debug(
                "acquired '{}' on {} of {} nodes in {} us, valid for {} ms, fencing token {}",
                r.resource,
                yes,
                fanOut.nodes().size(),
                (now - start) / 1000,
                (validUntil - now) / 1_000_000,
                fence.token);
          }
          return new Attempt(lease, null, votes, yes, now - start, validUntil - now);
        }
      }
    } catch (InterruptedException e) {
      Ballot rollback =
          fanOut.send(
              new NodeRequest(Verb.RELEASE, r.key, token, 0),
              NOT_OWNER,
              last,
              votes::refused); // roll back, don't wait
      rollback.whenAllSettled(() -> stragglers.keepUnconfirmed(rollback, r.key, token));
      throw e;
    }
    // Lost: release on every node that may hold our token (a late OK may still land), and wait,
    // so that a failed attempt leaves nothing behind that would block the next one.
    long now = ticker.read();
    long validUntil = Validity.validUntil(start, r.ttlMillis, config.clockDriftFactor());
    Ballot rollback =
        fanOut.send(
            new NodeRequest(Verb.RELEASE, r.key, token, 0), NOT_OWNER, last, votes::refused);
    rollback.awaitAll(ticker.read() + nodeTimeoutNanos);
    if (rollback.definite()
        < rollback.size()) { // a node is silent: its rollback may be needed later
      rollback.whenAllSettled(() -> stragglers.keepUnconfirmed(rollback, r.key, token));
    }
    // "Held elsewhere" only when the refusals alone rule out a quorum; if failed, silent or
    // quarantined nodes were needed to block us, it is an outage, not ordinary contention.
    int n = fanOut.nodes().size();
    Reason reason =
        yes >= config.quorum() && now >= validUntil
            ? Reason.VALIDITY_EXPIRED
            : votes.refusals() > n - config.quorum()
                ? Reason.HELD_ELSEWHERE
                : Reason.QUORUM_UNREACHABLE;
    if (log.isDebugEnabled()) {
      log.debug("attempt on '{}' lost ({}): {}", r.resource, reason, votes.outcomes());
    }
    emitAttempt(
        LockEvent.Kind.FAILED, r.resource, now - start, yes, reason.name(), votes::outcomes);
    return new Attempt(null, reason, votes, yes, now - start, Math.max(0, validUntil - now));
  }

  /**
   * The fencing token of a won vote: the largest counter among the nodes that said yes. Before it
   * is handed out a quorum must hold a counter at least that large, or a later acquisition on
   * another majority could get a smaller one (docs/fencing.md). Usually the yes-voters agree and
   * this costs nothing; when some lag (a node missed acquisitions, or a minority was bumped by
   * failed attempts), their counters are raised first, while we hold the lock.
   *
   * @return the token and the ballot of the last request sent; token 0 if no quorum could be made
   *     to hold it in time
   */
  private Fence fence(Request r, String token, Ballot votes) throws InterruptedException {
    int n = votes.size();
    long[] counters = new long[n];
    long max = 0;
    for (int i = 0; i < n; i++) {
      counters[i] = votes.value(i); // 0 for nodes that did not say yes (yet)
      max = Math.max(max, counters[i]);
    }
    long fence = max;
    int atMax = 0;
    for (long c : counters) {
      if (c > 0 && c >= fence) {
        atMax++;
      }
    }
    if (atMax >= config.quorum()) {
      return new Fence(fence, votes);
    }
    long start = ticker.read();
    Ballot raise =
        fanOut.send(
            new NodeRequest(Verb.RAISE_FENCE, r.key, token, fence),
            NOT_OWNER,
            votes,
            i -> counters[i] == 0 || counters[i] >= fence);
    int raised = raise.awaitQuorum(config.quorum() - atMax, start + nodeTimeoutNanos);
    log.debug(
        "raised lagging fencing counters of '{}' to {} on {} node(s)", r.resource, fence, raised);
    return new Fence(atMax + raised >= config.quorum() ? fence : 0, raise);
  }

  private record Fence(long token, Ballot ballot) {}

  /** WARN about a quarantined node at most once per node every 10 s: it matters, but it lasts. */
  private void logQuarantine(Ballot votes) {
    long now = ticker.read();
    List<NodeOutcome> outcomes = votes.outcomes();
    for (int i = 0; i < outcomes.size(); i++) {
      NodeOutcome outcome = outcomes.get(i);
      if (outcome.status() == NodeOutcome.Status.QUARANTINED) {
        long last = quarantineLoggedAt[i];
        if (last == 0 || now - last > TimeUnit.SECONDS.toNanos(10)) {
          quarantineLoggedAt[i] = now; // a benign race at worst logs twice
          log.warn(
              "node {} is quarantined by the restart guard: {}. It restarted without persistence or was flushed;"
                  + " it votes again once its data is older than maxTtl ({})",
              outcome.node(),
              outcome.detail(),
              config.maxTtl());
        }
      }
    }
  }

  /**
   * Extends a lease on its nodes and waits for the verdict; extends of one lease are serialised by
   * the lease.
   */
  boolean extend(QuorumLease lease, long ttlMillis) {
    long start = ticker.read();
    Ballot votes = sendExtend(lease, ttlMillis);
    try {
      votes.awaitQuorum(config.quorum(), start + nodeTimeoutNanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      log.warn(
          "extend of '{}' interrupted; the lease keeps its previous validity", lease.resource());
      return false;
    }
    if (applyExtend(lease, votes, start, ttlMillis)) {
      return true;
    }
    log.warn(
        "could not extend '{}': {} of {} nodes agreed (quorum {}); the lease keeps its previous validity; nodes: {}",
        lease.resource(),
        votes.yes(),
        fanOut.nodes().size(),
        config.quorum(),
        votes.outcomes());
    return false;
  }

  /**
   * One renewal of a kept-alive lease: the same extend, run on a renewal thread (the timer threads
   * never wait on a node). A renewal that does not win a quorum with validity left loses the lease
   * at once, never "maybe"; a renewal that hangs is overtaken by the lease's deadline timer.
   */
  void renew(QuorumLease lease) {
    watchdog.renewal(
        () -> {
          long start = ticker.read();
          if (!lease.readyToRenew(start)) {
            return;
          }
          Ballot votes = sendExtend(lease, lease.ttlMillis());
          try {
            votes.awaitQuorum(config.quorum(), start + nodeTimeoutNanos);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closing: the lease is released or expires
            return;
          }
          if (applyExtend(lease, votes, start, lease.ttlMillis())) {
            lease.scheduleRenewal(renewalIntervalNanos(lease.ttlMillis()));
          } else {
            lease.lose(LeaseLostException.Reason.RENEWAL_FAILED, votes.outcomes());
          }
        });
  }

  private Ballot sendExtend(QuorumLease lease, long ttlMillis) {
    Ballot votes =
        fanOut.send(
            new NodeRequest(Verb.EXTEND, lease.key(), lease.token(), ttlMillis),
            NOT_OWNER,
            lease.lastBallot(),
            lease.setBallot()::refused);
    lease.lastBallot(votes);
    return votes;
  }

  private boolean applyExtend(QuorumLease lease, Ballot votes, long start, long ttlMillis) {
    long validUntil = Validity.validUntil(start, ttlMillis, config.clockDriftFactor());
    boolean won =
        votes.yes() >= config.quorum()
            && ticker.read() - validUntil < 0
            && lease.extended(start, validUntil);
    if (won) {
      log.debug("extended '{}' by {} ms on {} nodes", lease.resource(), ttlMillis, votes.yes());
      long now = ticker.read();
      emitLease(
          LockEvent.Kind.EXTENDED,
          lease,
          Math.max(0, validUntil - now),
          now - start,
          votes.yes(),
          null,
          votes::outcomes);
    }
    return won;
  }

  /**
   * Checks that a lease of this ttl can be renewed, and returns the renewal interval. A renewal
   * starts {@code ttl × renewalFraction} after the previous one and may take a round of {@code
   * nodeTimeout}, after an acquisition that may itself have taken one: it must be decided before
   * the validity ({@code ttl − drift}) ends.
   */
  long checkRenewable(Duration ttl) {
    long ttlMillis = checkTtl(ttl);
    long interval = renewalIntervalNanos(ttlMillis);
    long drift = Validity.driftNanos(ttlMillis, config.clockDriftFactor());
    long ttlNanos = TimeUnit.MILLISECONDS.toNanos(ttlMillis);
    if (interval < nodeTimeoutNanos || ttlNanos - interval <= drift + 2 * nodeTimeoutNanos) {
      throw new IllegalArgumentException(
          String.format(
              java.util.Locale.ROOT,
              "ttl too short to renew: ttl × renewalFraction must be >= nodeTimeout (%d ms) and ttl × (1 - renewalFraction)"
                  + " must be > clock drift + 2 × nodeTimeout (%d ms + %d ms), was %s with renewalFraction %.3f",
              config.nodeTimeout().toMillis(),
              TimeUnit.NANOSECONDS.toMillis(drift),
              2 * config.nodeTimeout().toMillis(),
              ttl,
              config.renewalFraction()));
    }
    return interval;
  }

  private long renewalIntervalNanos(long ttlMillis) {
    return (long) (TimeUnit.MILLISECONDS.toNanos(ttlMillis) * config.renewalFraction());
  }

  Watchdog watchdog() {
    return watchdog;
  }

  /** Tells the listeners a lease was lost; called once per loss, by the lease. */
  void lost(QuorumLease lease, LeaseLostException loss) {
    emitLease(LockEvent.Kind.LOST, lease, 0, 0, 0, loss.reason().name(), loss::nodeOutcomes);
  }

  /** An event about an attempt (no lease): built only if someone listens. */
  private void emitAttempt(
      LockEvent.Kind kind,
      String resource,
      long elapsedNanos,
      int votes,
      String reason,
      Supplier<List<NodeOutcome>> nodes) {
    if (!listeners.isEmpty()) {
      emit(
          new LockEvent(
              kind,
              resource,
              null,
              0,
              Duration.ZERO,
              Duration.ofNanos(elapsedNanos),
              votes,
              config.quorum(),
              reason,
              nodes));
    }
  }

  /** An event about a lease: built only if someone listens. */
  private void emitLease(
      LockEvent.Kind kind,
      QuorumLease lease,
      long validityNanos,
      long elapsedNanos,
      int votes,
      String reason,
      Supplier<List<NodeOutcome>> nodes) {
    if (!listeners.isEmpty()) {
      emit(
          new LockEvent(
              kind,
              lease.resource(),
              TokenHash.of(lease.token()),
              lease.fencingToken(),
              Duration.ofNanos(validityNanos),
              Duration.ofNanos(elapsedNanos),
              votes,
              config.quorum(),
              reason,
              nodes));
    }
  }

  /** Hands an event to every listener; one that throws is logged and never breaks the lock path. */
  private void emit(LockEvent event) {
    for (RedlockListener listener : listeners) {
      try {
        listener.onEvent(event);
      } catch (RuntimeException e) {
        log.error("a RedlockListener threw on {}; the lock carries on", event, e);
      }
    }
  }

  /** Sends the owner-checked release of a lease to every node that may hold it. */
  Ballot sendRelease(QuorumLease lease) {
    held.remove(lease);
    emitLease(LockEvent.Kind.RELEASED, lease, 0, 0, 0, null, null);
    Ballot votes =
        fanOut.send(
            new NodeRequest(Verb.RELEASE, lease.key(), lease.token(), 0),
            NOT_OWNER,
            lease.lastBallot(),
            lease.setBallot()::refused);
    lease.lastBallot(votes);
    return votes;
  }

  /**
   * Waits, bounded, until a quorum of nodes no longer holds the lease's key: from then on another
   * client can take it. Nodes that answer later, or never, are logged once they have settled.
   */
  void awaitRelease(QuorumLease lease, Ballot votes, long deadline) {
    try {
      votes.awaitDefinite(config.quorum(), deadline);
    } catch (InterruptedException e) {
      // Stop waiting, keep the flag: the releases are on their way.
      Thread.currentThread().interrupt();
    }
    if (votes.allAnswered() && votes.definite() == votes.size()) {
      logRelease(lease.resource(), votes); // the usual case: nothing to wait for or send again
    } else {
      votes.whenAllSettled(() -> afterRelease(lease, votes));
    }
  }

  /** Logs a settled release, and keeps for sending again what a node did not confirm. */
  private void afterRelease(QuorumLease lease, Ballot votes) {
    logRelease(lease.resource(), votes);
    stragglers.keepUnconfirmed(votes, lease.key(), lease.token());
  }

  /**
   * WARN only when the release left the lock blocked: fewer than a quorum confirmed, so others wait
   * for the ttl. A node that is down for hours would otherwise log on every release; its failures
   * stay visible at DEBUG and in every acquisition's per-node account.
   */
  private void logRelease(String resource, Ballot votes) {
    int confirmed = votes.definite();
    if (confirmed < config.quorum()) {
      log.warn(
          "release of '{}' confirmed by only {} of {} nodes (quorum {}); others may wait until the ttl ends: {}",
          resource,
          confirmed,
          votes.size(),
          config.quorum(),
          votes.outcomes());
    } else if (log.isDebugEnabled()) {
      log.debug("released '{}': {}", resource, votes.outcomes());
    }
  }

  long now() {
    return ticker.read();
  }

  long nodeTimeoutNanos() {
    return nodeTimeoutNanos;
  }

  private Request request(String resource, Duration ttl) {
    ensureOpen();
    Objects.requireNonNull(resource, "resource must not be null");
    if (resource.isBlank()) {
      throw new IllegalArgumentException("resource must not be blank, was '" + resource + "'");
    }
    if (resource.charAt(0) == NodeKeys.RESERVED) {
      throw new IllegalArgumentException(
          "resource must not start with '"
              + NodeKeys.RESERVED
              + "' (reserved for the nodes' own keys), was '"
              + resource
              + "'");
    }
    return new Request(resource, config.keyPrefix() + resource, checkTtl(ttl));
  }

  long checkTtl(Duration ttl) {
    long millis = Validity.checkTtl(ttl, config.nodeTimeout(), config.clockDriftFactor());
    if (ttl.compareTo(config.maxTtl()) > 0) {
      throw new IllegalArgumentException(
          "ttl must be <= maxTtl ("
              + config.maxTtl()
              + "), was "
              + ttl
              + "; raise maxTtl for every client of these nodes, or renew a shorter ttl (Lease.keepAlive)");
    }
    return millis;
  }

  private long pauseNanos() {
    long jitter = config.retryJitter().toNanos();
    return config.retryDelay().toNanos()
        + (jitter == 0 ? 0 : ThreadLocalRandom.current().nextLong(jitter + 1));
  }

  private void ensureOpen() {
    if (closed.get()) {
      throw new IllegalStateException("this Redlock is closed");
    }
  }

  /**
   * Releases every lease still held (waiting at most about {@code nodeTimeout} for the nodes), then
   * stops the I/O threads and closes all connections. Idempotent; after it, acquiring throws {@link
   * IllegalStateException}.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    List<QuorumLease> leases = new ArrayList<>(held);
    List<Ballot> releases = new ArrayList<>();
    for (QuorumLease lease : leases) {
      releases.add(lease.beginRelease());
    }
    // Wait for every release to settle, not just a quorum: a release chained behind a straggling
    // SET is only sent when that SET settles, and the I/O threads are about to stop. Bounded: the
    // straggler takes at most nodeTimeout, its release at most nodeTimeout more.
    long deadline = ticker.read() + 2 * nodeTimeoutNanos + TimeUnit.MILLISECONDS.toNanos(100);
    for (int i = 0; i < leases.size(); i++) {
      Ballot release = releases.get(i);
      if (release != null) {
        try {
          release.awaitAll(deadline);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
        logRelease(leases.get(i).resource(), release);
      }
    }
    stragglers.close();
    watchdog.close();
    io.shutdown();
    try {
      if (!io.awaitTermination(
          2 * nodeTimeoutNanos + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS)) {
        io.shutdownNow();
      }
    } catch (InterruptedException e) {
      io.shutdownNow();
      Thread.currentThread().interrupt();
    }
    fanOut.nodes().forEach(LockNode::close);
    log.debug("closed; released {} lease(s) still held", leases.size());
  }

  @Override
  public String toString() {
    return "Redlock{nodes="
        + config.nodes()
        + ", quorum="
        + config.quorum()
        + ", held="
        + held.size()
        + (closed.get() ? ", closed" : "")
        + "}";
  }

  private record Request(String resource, String key, long ttlMillis) {}

  private final class Attempt {
    final QuorumLease lease;
    final Reason reason;
    final Ballot votes;

    /** Yes votes when the attempt was decided; stragglers may say yes later, too late to count. */
    final int won;

    final long elapsedNanos;
    final long validityLeftNanos;

    Attempt(
        QuorumLease lease,
        Reason reason,
        Ballot votes,
        int won,
        long elapsedNanos,
        long validityLeftNanos) {
      this.lease = lease;
      this.reason = reason;
      this.votes = votes;
      this.won = won;
      this.elapsedNanos = elapsedNanos;
      this.validityLeftNanos = validityLeftNanos;
    }

    /** Yes votes that came after the decision (rolled back): said, so the account adds up. */
    private String lateYes() {
      int late = votes.yes() - won;
      return late > 0 ? " (" + late + " more said yes after the decision, rolled back)" : "";
    }

    LockUnavailableException failure(Request r, int attempts, long waitedNanos) {
      String why =
          switch (reason) {
            case HELD_ELSEWHERE -> "held elsewhere";
            case QUORUM_UNREACHABLE -> "quorum unreachable";
            case VALIDITY_EXPIRED -> "validity expired before the quorum was counted";
          };
      String message =
          String.format(
              java.util.Locale.ROOT,
              "could not acquire '%s' (%s) after %d attempt(s) in %d ms: last attempt won %d of %d nodes (quorum %d) in %.1f ms%s,"
                  + " validity left %d ms; nodes: %s",
              r.resource,
              why,
              attempts,
              TimeUnit.NANOSECONDS.toMillis(waitedNanos),
              won,
              fanOut.nodes().size(),
              config.quorum(),
              elapsedNanos / 1e6,
              lateYes(),
              TimeUnit.NANOSECONDS.toMillis(validityLeftNanos),
              votes.outcomes());
      LockUnavailableException e =
          new LockUnavailableException(message, r.resource, reason, attempts, votes.outcomes());
      votes.errors().forEach(e::addSuppressed);
      return e;
    }
  }
}
