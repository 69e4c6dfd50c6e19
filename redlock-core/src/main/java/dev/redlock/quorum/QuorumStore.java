package dev.redlock.quorum;

import dev.redlock.internal.Uninterruptibly;
import dev.redlock.node.LockNode;
import dev.redlock.node.NodeKeys;
import dev.redlock.node.NodeRequest;
import dev.redlock.node.NodeRequest.Verb;
import dev.redlock.spi.LeaseRequest;
import dev.redlock.spi.LeaseRequest.Shape;
import dev.redlock.spi.LeaseStore;
import dev.redlock.spi.Tally;
import dev.redlock.timing.Ticker;
import dev.redlock.timing.Timers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leases on a quorum of independent Redis nodes: the Redlock algorithm's store. One request goes to
 * every node at once; the vote is decided as soon as a quorum said yes or is out of reach; a won
 * vote is fenced (the token is the largest of the yes-voters', and the release raises the others'
 * counters to it); a lost one is rolled back on every node that may hold the token. Requests of one
 * lease are ordered node by node ({@link FanOut}), and a release a node did not confirm is sent
 * again ({@link StragglerReleases}).
 */
public final class QuorumStore implements LeaseStore<QuorumHeld> {
  private static final Logger log = LoggerFactory.getLogger(QuorumStore.class);
  private static final String HELD = "held by another owner";
  private static final String NOT_OWNER = "not the owner: expired or taken";

  private final int quorum;
  private final String keyPrefix;
  private final FanOut fanOut;
  private final ExecutorService io;
  private final Ticker ticker;
  private final long nodeTimeoutNanos;
  private final StragglerReleases stragglers;
  private final Timers timer;

  /**
   * Per key, the last release (or roll-back) this store sent that some node has not settled yet: a
   * release returns once a quorum confirmed it. The next take of the key follows it node by node
   * ({@link RequestOrder}), or the new {@code SET NX} could reach a straggling node before our own
   * release and be refused by our own old key; a request whose predecessor settles after the vote's
   * deadline is skipped ({@link FanOut}). An entry lives from the moment its release is sent until
   * it has settled on every node. Only this client's own releases are followed: another process's
   * take may still meet our key on a slow node, as it would meet any holder's.
   */
  private final ConcurrentMap<String, Ballot> unsettled = new ConcurrentHashMap<>();

  private final FirstConnections firstConnections;

  /**
   * @param quorum how many yes votes win
   * @param keyPrefix put before every resource to form its key
   * @param nodeTimeout the bound on one request to one node, and on one round of votes
   * @param maxTtl the longest ttl of any client of these nodes (for messages)
   * @param connectTimeout the bound on making one connection, and on the first attempt's wait for
   *     the first connections
   * @param nodes one per node, in order; closed with the store
   * @param io the I/O threads; shut down with the store
   * @param timer the lease timers (straggler re-sends, renewal deadlines)
   */
  public QuorumStore(
      int quorum,
      String keyPrefix,
      java.time.Duration nodeTimeout,
      java.time.Duration maxTtl,
      java.time.Duration connectTimeout,
      List<LockNode> nodes,
      ExecutorService io,
      Ticker ticker,
      Timers timer) {
    this.quorum = quorum;
    this.keyPrefix = keyPrefix;
    this.io = io;
    this.ticker = ticker;
    this.nodeTimeoutNanos = nodeTimeout.toNanos();
    this.firstConnections =
        new FirstConnections(nodes, io, quorum, connectTimeout.toNanos(), nodeTimeoutNanos);
    this.fanOut =
        new FanOut(
            nodes, io, ticker, nodeTimeoutNanos, new NodeStates(nodes.size(), quorum, maxTtl));
    this.stragglers = new StragglerReleases(nodes, timer, io, ticker, nodeTimeoutNanos);
    this.timer = timer;
  }

  @Override
  public int quorum() {
    return quorum;
  }

  @Override
  public int size() {
    return fanOut.nodes().size();
  }

  /** Starts opening one connection to every node; returns at once. */
  public void openConnections() {
    firstConnections.open();
  }

  /** The first attempt waits for the first connections ({@link FirstConnections#await}). */
  @Override
  public void awaitConnected() throws InterruptedException {
    firstConnections.await();
  }

  @Override
  public void checkResource(String resource) {
    NodeKeys.checkResource(resource);
  }

  /**
   * One vote: ask every node, count, fence a quorum, else roll back. Whether validity is left is
   * the engine's to say; it gives a lease won too late back.
   *
   * <p>A lease of several resources ({@link Shape#ALL}) runs one script per node that takes every
   * key or none (acquire_all.lua), so a node never holds part of the set, and two clients asking
   * for overlapping sets can only refuse each other there, never wait for each other; its keys are
   * the ones a lock of each resource alone uses. A side of a read-write lock runs read_acquire.lua
   * (refused while a writer holds or waits) or write_acquire.lua (refused while a writer or a live
   * reader holds; leaves the intent mark), both drawing from the lock's one counter; the lock's
   * keys are its own ({@link NodeKeys#readWriteKeys}), apart from every plain lock's.
   */
  @Override
  public Vote<QuorumHeld> take(LeaseRequest request, long start) throws InterruptedException {
    List<String> resources = request.resources();
    return switch (request.shape()) {
      case ONE -> {
        String key = keyPrefix + resources.get(0);
        yield vote(request, key, null, start, new RequestOrder(unsettled.get(key)));
      }
      case ALL -> {
        String[] keys = new String[resources.size()];
        List<Ballot> before = new ArrayList<>(0);
        for (int i = 0; i < keys.length; i++) {
          keys[i] = keyPrefix + resources.get(i);
          Ballot release = unsettled.get(keys[i]);
          if (release != null && !before.contains(release)) {
            before.add(release);
          }
        }
        yield vote(request, keys[0], keys, start, new RequestOrder(before));
      }
      case READ, WRITE -> {
        // Both sides follow the last unsettled release of either side, keyed by the writer key.
        String[] keys = NodeKeys.readWriteKeys(keyPrefix, resources.get(0));
        yield vote(request, keys[0], keys, start, new RequestOrder(unsettled.get(keys[0])));
      }
    };
  }

  @Override
  public boolean hasReadWriteLocks() {
    return true;
  }

  /** {@link #take}'s vote, about {@code key} alone or about {@code keys} (null for one key). */
  private Vote<QuorumHeld> vote(
      LeaseRequest request, String key, String[] keys, long start, RequestOrder order)
      throws InterruptedException {
    Ballot votes =
        fanOut.send(
            NodeRequest.of(
                Verb.ACQUIRE,
                request.shape(),
                key,
                keys,
                request.token(),
                request.ttlMillis(),
                request.intentMillis()),
            HELD,
            order,
            null,
            start + nodeTimeoutNanos);
    int yes;
    try {
      yes = votes.awaitQuorum(quorum, start + nodeTimeoutNanos);
      if (yes >= quorum) {
        long fence = fence(request, key, keys, votes, order);
        if (fence > 0) {
          return new Vote<>(new QuorumHeld(request, key, keys, fence, votes, order), yes, votes);
        }
      }
    } catch (InterruptedException e) {
      rollBack(request, key, keys, votes, order, false); // don't wait
      throw e;
    }
    // Lost: release on every node that may hold our token (a late OK may still land), and wait,
    // so that a failed attempt leaves nothing behind that would block the next one.
    rollBack(request, key, keys, votes, order, true);
    return new Vote<>(null, yes, votes);
  }

  /** Releases on every node that may hold the token; a silent node's release is kept for later. */
  private void rollBack(
      LeaseRequest lease, String key, String[] keys, Ballot votes, RequestOrder order, boolean wait)
      throws InterruptedException {
    Shape shape = lease.shape();
    NodeRequest release = NodeRequest.of(Verb.RELEASE, shape, key, keys, lease.token(), 0, 0);
    Ballot rollback = fanOut.send(release, NOT_OWNER, order, votes::refused);
    follow(shape, key, keys, rollback); // the next take follows it until it has settled
    rollback.whenAllSettled(() -> unfollow(shape, key, keys, rollback));
    boolean confirmed = false;
    try {
      if (wait) {
        rollback.awaitAll(ticker.read() + nodeTimeoutNanos);
        confirmed = rollback.definite() == rollback.size(); // then nothing to send again
      } else {
        rollback.readInBackground(); // an interrupted caller: nobody will read these replies
      }
    } finally {
      if (!confirmed) { // also when interrupted while waiting: the roll-back is still owed
        rollback.whenAllSettled(() -> stragglers.keepUnconfirmed(rollback, release));
      }
    }
  }

  /**
   * The fencing token of a won vote: the largest token among the nodes that said yes. Each node's
   * next yes vote must then exceed it, or a later acquisition on another majority could get a
   * smaller one (docs/fencing.md). A node that gave the largest token has it as its counter. For
   * the others the release raises their counter to it; should this lease expire unreleased, a node
   * whose token was its own clock votes yes again only once its key has expired, a ttl later on
   * that clock, and so with a larger token as long as it lagged the largest by less than the ttl.
   * Only yes-voters that fit neither case (their token came from a counter ahead of their clock, or
   * they lag by a whole ttl) are raised now, while we hold the lock; usually none.
   *
   * @return the token; 0 if no quorum could be made to hold it in time
   */
  private long fence(
      LeaseRequest lease, String key, String[] keys, Ballot votes, RequestOrder order)
      throws InterruptedException {
    int n = votes.size();
    long[] replies = new long[n];
    long fence = 0;
    for (int i = 0; i < n; i++) {
      replies[i] = votes.value(i); // token * 2 + ahead; 0 for nodes that did not say yes (yet)
      fence = Math.max(fence, replies[i] >>> 1);
    }
    // A ttl in µs, less 2 ms for where in the script a node reads its clock and sets the key.
    long lagBudget = lease.ttlMillis() * 1000 - 2000;
    int safe = 0;
    boolean[] skip = new boolean[n];
    for (int i = 0; i < n; i++) {
      long reply = replies[i];
      long vote = reply >>> 1;
      boolean ahead = (reply & 1) == 1;
      skip[i] = reply == 0 || vote >= fence || (!ahead && fence - vote < lagBudget);
      if (reply != 0 && skip[i]) {
        safe++;
      }
    }
    if (safe >= quorum) {
      return fence;
    }
    long start = ticker.read();
    Ballot raise =
        fanOut.send(
            NodeRequest.of(Verb.RAISE_FENCE, lease.shape(), key, keys, lease.token(), fence, 0),
            NOT_OWNER,
            order,
            i -> skip[i]);
    int raised = raise.awaitQuorum(quorum - safe, start + nodeTimeoutNanos);
    log.debug("raised lagging fencing counters of '{}' to {} on {} node(s)", key, fence, raised);
    return safe + raised >= quorum ? fence : 0;
  }

  @Override
  public Tally renew(QuorumHeld held, long ttlMillis) throws InterruptedException {
    long start = ticker.read();
    Ballot votes = send(held, held.request(Verb.EXTEND, ttlMillis));
    votes.awaitQuorum(quorum, start + nodeTimeoutNanos);
    return votes;
  }

  /**
   * A renewal: the same owner-checked extend, pipelined with the other leases' renewals on each
   * node; {@code decided} runs on the thread that records the deciding answer, or on the timer at
   * the node timeout.
   */
  @Override
  public boolean renewAsync(
      QuorumHeld held, long ttlMillis, java.util.function.Consumer<Tally> decided) {
    long deadline = ticker.read() + nodeTimeoutNanos;
    Ballot votes =
        fanOut.sendPipelined(
            held.request(Verb.EXTEND, ttlMillis), NOT_OWNER, held.order, held.setBallot::refused);
    // The action first, then its timer: a timer that fired before the action was registered
    // would decide nothing, and the renewal would wait for every node.
    AtomicReference<ScheduledFuture<?>> timeout = new AtomicReference<>();
    AtomicBoolean done = new AtomicBoolean();
    votes.whenDecided(
        quorum,
        deadline,
        () -> {
          done.set(true);
          ScheduledFuture<?> pending = timeout.get();
          if (pending != null) {
            pending.cancel(false);
          }
          decided.accept(votes);
        });
    if (!done.get()) {
      timeout.set(timer.at(deadline, votes::decideAtDeadline)); // a no-op if decided meanwhile
    }
    return true;
  }

  /**
   * Releases and waits, bounded, until a quorum of nodes no longer holds the key: from then on
   * another client can take it. Nodes that answer later, or never, are logged once they have
   * settled, and what they did not confirm is sent again.
   */
  @Override
  public void giveBack(QuorumHeld held) {
    giveBackAndCount(held);
  }

  /**
   * Other clients wait when a quorum of nodes told of the release subscribers besides this one's
   * own ({@code release.lua} answers 1 + 2 x the subscribers told). A set's or a read-write lock's
   * release says nothing.
   */
  @Override
  public boolean giveBackToWaiters(QuorumHeld held) {
    Ballot votes = giveBackAndCount(held);
    if (held.request.shape() != Shape.ONE) {
      return false;
    }
    List<LockNode> nodes = fanOut.nodes();
    int told = 0;
    for (int i = 0; i < nodes.size(); i++) {
      long reply = votes.value(i); // 0 unless the node answered OK
      long others =
          (reply - 1) / 2 - (reply > 1 && nodes.get(i).watches(held.request.name()) ? 1 : 0);
      if (others > 0) {
        told++;
      }
    }
    return told >= quorum;
  }

  private Ballot giveBackAndCount(QuorumHeld held) {
    NodeRequest release = held.request(Verb.RELEASE, held.fencingToken());
    Ballot votes = send(held, release);
    Shape shape = held.request.shape();
    follow(shape, held.key, held.keys, votes); // from now on, a take of these keys follows it
    try {
      votes.awaitDefinite(quorum, ticker.read() + nodeTimeoutNanos);
    } catch (InterruptedException e) {
      // Stop waiting, keep the flag: the releases are on their way.
      Thread.currentThread().interrupt();
    }
    if (votes.allAnswered() && votes.definite() == votes.size()) {
      unfollow(shape, held.key, held.keys, votes); // answered everywhere: nothing to follow
      logRelease(held.request.name(), votes); // the usual case: nothing to wait for or send again
    } else {
      votes.whenAllSettled(
          () -> {
            unfollow(shape, held.key, held.keys, votes);
            logRelease(held.request.name(), votes);
            stragglers.keepUnconfirmed(votes, release);
          });
    }
    return votes;
  }

  /**
   * Releases all at once and waits for every release to settle, not just a quorum: a release
   * chained behind a straggling SET is only sent when that SET settles, and the I/O threads are
   * about to stop. Bounded, best effort: three node timeouts cover a SET that waited behind
   * another, its own round trip and its release's; a release not sent by then (a node slower still,
   * or connecting) is failed as "closed", and that node keeps the key until its ttl ends.
   */
  @Override
  public void giveBackAll(List<QuorumHeld> held) {
    List<Ballot> releases = new ArrayList<>();
    for (QuorumHeld h : held) {
      releases.add(send(h, h.request(Verb.RELEASE, h.fencingToken())));
    }
    long deadline = ticker.read() + 3 * nodeTimeoutNanos + TimeUnit.MILLISECONDS.toNanos(100);
    // Through interrupts: close() from an interrupted thread, or an attempt interrupted by close()
    // itself, still owes these releases, and the I/O threads stop next.
    for (int i = 0; i < held.size(); i++) {
      Ballot release = releases.get(i);
      Uninterruptibly.await(
          () -> {
            release.awaitAll(deadline);
            return null;
          });
      logRelease(held.get(i).request().name(), release);
    }
  }

  /** A request of {@code held}: behind its earlier ones, not to nodes that refused its SET. */
  private Ballot send(QuorumHeld held, NodeRequest request) {
    return fanOut.send(request, NOT_OWNER, held.order, held.setBallot::refused);
  }

  /**
   * Makes the next take of the lease's keys follow {@code release}: each of a set's keys; else only
   * its first key, which for a read-write lock is its writer key, under which both sides look.
   */
  private void follow(Shape shape, String key, String[] keys, Ballot release) {
    for (String k : shape == Shape.ALL ? keys : new String[] {key}) {
      unsettled.put(k, release);
    }
  }

  private void unfollow(Shape shape, String key, String[] keys, Ballot release) {
    for (String k : shape == Shape.ALL ? keys : new String[] {key}) {
      unsettled.remove(k, release);
    }
  }

  /**
   * WARN only when the release left the lock blocked: fewer than a quorum confirmed, so others wait
   * for the ttl. A node that is down for hours would otherwise log on every release; its failures
   * stay visible at DEBUG and in every acquisition's per-node account.
   */
  private void logRelease(String resource, Ballot votes) {
    int confirmed = votes.definite();
    if (confirmed < quorum) {
      log.warn(
          "release of '{}' confirmed by only {} of {} nodes (quorum {}); others may wait until the ttl ends: {}",
          resource,
          confirmed,
          votes.size(),
          quorum,
          votes.outcomes());
    } else if (log.isDebugEnabled()) {
      log.debug("released '{}': {}", resource, votes.outcomes());
    }
  }

  /** Each node's release notices of {@code resource} go to {@code to} with the node's index. */
  @Override
  public void watchReleases(String resource, Releases to) {
    List<LockNode> nodes = fanOut.nodes();
    for (int i = 0; i < nodes.size(); i++) {
      int node = i;
      nodes.get(i).watchReleases(resource, (r, token) -> to.released(r, node, token));
    }
  }

  @Override
  public void unwatchReleases(String resource) {
    fanOut.nodes().forEach(n -> n.unwatchReleases(resource));
  }

  /** Stops re-sending, the I/O threads and the connections. */
  @Override
  public void close() {
    stragglers.close();
    fanOut.close();
    io.shutdown();
    // The I/O threads finish what they have (a straggler's reply, the release chained behind it),
    // bounded, through an interrupt of the closing thread: cut short, they would leave a key on a
    // slow node until its ttl.
    long deadline = System.nanoTime() + 2 * nodeTimeoutNanos + TimeUnit.SECONDS.toNanos(1);
    boolean finished =
        Uninterruptibly.await(
            () ->
                io.awaitTermination(
                    Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
    if (!finished) {
      io.shutdownNow();
    }
    fanOut.nodes().forEach(LockNode::close);
  }
}
