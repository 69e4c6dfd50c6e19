package dev.redlock;

import dev.redlock.spi.LeaseStore;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * The threads of one service that wait in {@code acquire} for the same resource, in line. Only the
 * first in line asks the store again (after the retry pause); the others park until they are first,
 * so a service's many threads on one resource cost the nodes one poller, not one each. A release by
 * this service wakes the first at once: a lock handed between this service's threads waits for no
 * retry pause.
 *
 * <p>Safety does not depend on any of this: the store decides every grant, a woken thread only
 * makes an attempt sooner, and a thread that is never woken still asks after its pause. A new
 * {@code acquire} goes behind the threads already in line rather than racing them (no barging),
 * which also keeps a service that re-takes the lock it just released from beating its own waiters.
 * Other clients' releases are told by the nodes ({@link #noticed}, release notices over pub/sub):
 * once a quorum of nodes said a lease was released there, the first asks at once. A notice lost,
 * late, or never sent (an ACL without channels, a lease that expired rather than being released)
 * costs the pause, nothing else.
 *
 * <p>Only {@code acquire} (and {@code acquireAll}, {@code withLock}) stands in line: {@code
 * tryAcquire} makes its one attempt whatever the line, and asynchronous acquisitions poll on
 * timers. The first in line runs the listeners' ATTEMPT events on its own thread: a listener that
 * blocks holds up the whole line (listeners must not block; {@link RedlockListener}).
 *
 * <p>A line is keyed by what is waited for ({@link Target#line}): a resource's name, a set's sorted
 * list of names (never its label {@code [a, b]}, which a single resource may be named too), or one
 * side of a read-write lock. Waiters for a set are woken by a release of that set and poll for the
 * rest.
 *
 * <p>A line exists only while someone waits in it: no state per resource ever locked.
 */
final class Waiters {
  private final ConcurrentHashMap<Object, Line> lines = new ConcurrentHashMap<>();

  /** Asks the store for release notices of a resource while it has a line. */
  interface Watcher {
    void watch(String resource);

    void unwatch(String resource);
  }

  private static final Watcher NOBODY =
      new Watcher() {
        @Override
        public void watch(String resource) {}

        @Override
        public void unwatch(String resource) {}
      };

  private final Watcher watcher;

  /** How many nodes' notices of one release make it a release: the store's quorum. */
  private final int quorum;

  Waiters() {
    this(NOBODY, 1);
  }

  Waiters(Watcher watcher, int quorum) {
    this.watcher = watcher;
    this.quorum = quorum;
  }

  /** The waiting lines of a service over {@code store}, told of releases by its notices. */
  static Waiters over(LeaseStore<?> store) {
    Waiters[] made = new Waiters[1];
    LeaseStore.Releases told = (resource, part, token) -> made[0].noticed(resource, part, token);
    made[0] =
        new Waiters(
            new Watcher() {
              @Override
              public void watch(String resource) {
                store.watchReleases(resource, told);
              }

              @Override
              public void unwatch(String resource) {
                store.unwatchReleases(resource);
              }
            },
            store.quorum());
    return made[0];
  }

  /**
   * Waits until this thread, in {@code line}, may ask again: when it is first and either this
   * service released the resource or the retry pause is over; or at {@code giveUpAt}, for a last
   * attempt, whatever its place; or when {@code engine} closes (the attempt then fails at once).
   */
  void awaitTurn(Line line, boolean unbounded, long giveUpAt, LeaseEngine<?> engine)
      throws InterruptedException {
    Thread me = Thread.currentThread();
    long pauseEnd = 0;
    boolean pausing = false;
    for (; ; ) {
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
      if (engine.isClosed()) {
        return;
      }
      long now = engine.ticker().read();
      long untilGiveUp = unbounded ? Long.MAX_VALUE : giveUpAt - now;
      if (untilGiveUp <= 0) {
        return;
      }
      if (!line.isFirst(me)) {
        if (unbounded) {
          LockSupport.park(this);
        } else {
          LockSupport.parkNanos(this, untilGiveUp);
        }
        continue;
      }
      if (line.takeReleased()) {
        return;
      }
      // The pause runs on real time, as a sleep would (the deadline is the ticker's): a ticker
      // that stands still, as tests' clocks may, must not stop the first from ever asking again.
      long real = System.nanoTime();
      if (!pausing) {
        pausing = true;
        pauseEnd = real + engine.pauseNanos();
      }
      long untilPauseEnd = pauseEnd - real;
      if (untilPauseEnd <= 0) {
        return;
      }
      LockSupport.parkNanos(this, Math.min(untilPauseEnd, untilGiveUp));
    }
  }

  /** One resource's waiting threads, first in line first; guarded by its monitor. */
  static final class Line {
    private final ArrayDeque<Thread> threads = new ArrayDeque<>(4);

    /** A release here since the first in line last asked: it asks again without a pause. */
    private boolean released;

    /** Left by its last thread and out of the map: joiners make a new one. */
    private boolean gone;

    /** Whether the store was asked for this resource's release notices (to undo once). */
    private boolean watched;

    /** The fencing token of this service's latest release here: its own notices are not news. */
    private long releasedHere;

    /** The release being noticed, and a bit per node that told of it. */
    private long noticeToken;

    private final java.util.BitSet noticedBy = new java.util.BitSet();

    synchronized boolean isFirst(Thread thread) {
      return threads.peekFirst() == thread;
    }

    /** True (and cleared) if a release came since the last call: the first asks at once. */
    synchronized boolean takeReleased() {
      boolean was = released;
      released = false;
      return was;
    }
  }

  /**
   * Releases by this service so far, of anything: a thread reads it before an attempt and, once in
   * line, learns whether a release came in between, when there was no line to tell it.
   */
  private final java.util.concurrent.atomic.AtomicLong releases =
      new java.util.concurrent.atomic.AtomicLong();

  long releases() {
    return releases.get();
  }

  /**
   * After joining: if this service released anything since {@code seen} (read before the attempt
   * that was refused), that release may have found no line to tell, so the first asks at once. A
   * release of another resource costs at most one attempt without a pause.
   */
  void releasedSince(Line line, long seen) {
    if (releases.get() != seen) {
      synchronized (line) {
        line.released = true;
      }
    }
  }

  /** Whether anyone waits for {@code resource}: then a new acquire goes behind them. */
  boolean anyWaiting(Object resource) {
    return lines.get(resource) != null;
  }

  /** Puts the calling thread at the end of {@code resource}'s line. */
  Line join(Object resource) {
    Thread me = Thread.currentThread();
    for (; ; ) {
      Line line = lines.computeIfAbsent(resource, r -> new Line());
      synchronized (line) {
        if (!line.gone) {
          if (!line.watched && resource instanceof String one) {
            // Under the line's monitor, as the unwatch when it goes: once each, in that order.
            // A set's waiters poll, and wake on this service's releases.
            line.watched = true;
            watcher.watch(one);
          }
          line.threads.addLast(me);
          return line;
        }
      }
      // left by its last thread between the lookup and the lock: it is out of the map by now
    }
  }

  /**
   * Takes the calling thread out of its line; the next one, if it is now first, is woken.
   *
   * @param won whether it leaves with the lease: a release seen before its win is spent then, and
   *     the next first waits its pause; one that gives up leaves a release for the next to use
   */
  void leave(Object resource, Line line, boolean won) {
    Thread me = Thread.currentThread();
    Thread next = null;
    synchronized (line) {
      boolean wasFirst = line.threads.peekFirst() == me;
      if (wasFirst && won) {
        line.released = false;
      }
      line.threads.remove(me);
      if (line.threads.isEmpty()) {
        line.gone = true;
        lines.remove(resource, line);
        if (line.watched) {
          watcher.unwatch((String) resource);
        }
      } else if (wasFirst) {
        next = line.threads.peekFirst();
      }
    }
    if (next != null) {
      LockSupport.unpark(next);
    }
  }

  /**
   * This service is about to release {@code resource}, the lease of {@code fencingToken}: the
   * nodes' notices of it, which may come before the release returns, are not news.
   */
  void releasing(Object resource, long fencingToken) {
    Line line = lines.get(resource);
    if (line != null) {
      synchronized (line) {
        line.releasedHere = fencingToken;
      }
    }
  }

  /**
   * This service released {@code resource}, the lease of {@code fencingToken} (0 if it handed out
   * none): the first in line asks at once, unless {@code othersWait}: other clients were told of
   * this release by a quorum of nodes, and the lock is left to them (their first asks at once);
   * ours asks after its pause, or when told of their release. Services waiting for one lock so take
   * turns instead of racing each release.
   */
  void released(Object resource, long fencingToken, boolean othersWait) {
    releases.incrementAndGet(); // before the lookup: a thread joining meanwhile sees one or other
    Line line = lines.get(resource);
    if (line == null) {
      return; // the usual case: nobody here waits for it
    }
    Thread first;
    synchronized (line) {
      line.releasedHere = fencingToken;
      if (othersWait) {
        return;
      }
      line.released = true;
      first = line.threads.peekFirst();
    }
    if (first != null) {
      LockSupport.unpark(first);
    }
  }

  /**
   * This service released something that every line whose key {@code serves} may use (a semaphore's
   * permit): the first of each asks at once.
   */
  void releasedWhere(java.util.function.Predicate<Object> serves, long fencingToken) {
    lines.forEach(
        (key, line) -> {
          if (serves.test(key)) {
            released(key, fencingToken, false);
          }
        });
  }

  /**
   * Node {@code node} told that the lease of {@code fencingToken} released {@code resource} there.
   * Once a quorum of nodes told of the same release, the first in line asks at once (sooner, most
   * of the nodes would still hold it); notices of this service's own release are not news, its
   * first was woken already. A hint only: the store decides every grant.
   */
  void noticed(String resource, int node, long fencingToken) {
    Line line = lines.get(resource);
    if (line == null) {
      return;
    }
    Thread first;
    synchronized (line) {
      if (fencingToken == line.releasedHere) {
        return;
      }
      if (fencingToken != line.noticeToken) {
        line.noticeToken = fencingToken;
        line.noticedBy.clear();
      }
      line.noticedBy.set(node);
      if (line.noticedBy.cardinality() != quorum) {
        return; // not yet a quorum, or told of it already
      }
      line.released = true;
      first = line.threads.peekFirst();
    }
    if (first != null) {
      LockSupport.unpark(first);
    }
  }

  /** Wakes every waiting thread (the service is closing: their next attempt fails at once). */
  void wakeAll() {
    for (Line line : lines.values()) {
      synchronized (line) {
        line.threads.forEach(LockSupport::unpark);
      }
    }
  }

  int lineCount() {
    return lines.size();
  }
}
