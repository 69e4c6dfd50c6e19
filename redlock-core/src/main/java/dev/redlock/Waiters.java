package dev.redlock;

import dev.redlock.spi.LeaseStore;
import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;

/**
 * The threads of one service that wait in {@code acquire} for the same thing ({@link Target#line}),
 * in line. Only the first asks the store again (after the retry pause); the others park, so many
 * threads cost the nodes one poller. A release by this service, or one a quorum of nodes told of
 * ({@link #noticed}), wakes the first at once. A new {@code acquire} goes behind the threads in
 * line (no barging). Safety does not depend on any of this: the store decides every grant, and a
 * thread never woken still asks after its pause. A line exists only while someone waits in it.
 */
final class Waiters {
  private final ConcurrentHashMap<Object, Line> lines = new ConcurrentHashMap<>();

  /** Asks the store for release notices of a resource while it has a line; none by default. */
  interface Watcher {
    default void watch(String resource, LeaseStore.Releases to) {}

    default void unwatch(String resource) {}
  }

  private final Watcher watcher;
  private final LeaseStore.Releases told = this::noticed; // made once, not per line
  private final int quorum; // how many nodes' notices of one release make it a release

  Waiters() {
    this(new Watcher() {}, 1);
  }

  Waiters(Watcher watcher, int quorum) {
    this.watcher = watcher;
    this.quorum = quorum;
  }

  /** The waiting lines of a service over {@code store}, told of releases by its notices. */
  static Waiters over(LeaseStore<?> store) {
    return new Waiters(
        new Watcher() {
          @Override
          public void watch(String resource, LeaseStore.Releases to) {
            store.watchReleases(resource, to);
          }

          @Override
          public void unwatch(String resource) {
            store.unwatchReleases(resource);
          }
        },
        store.quorum());
  }

  /** The attempts of one acquisition, made in its line. */
  interface Attempts {
    /**
     * The next attempt's lease, or null if refused with time left.
     *
     * @throws LockUnavailableException once the acquisition gives up
     */
    Lease next() throws InterruptedException;
  }

  /**
   * Makes {@code attempts} until one wins: at once if nobody here waits for {@code waitingFor},
   * else behind those who do; after a refusal, in line. {@code readers}: one that wins lets the
   * next in line ask at once (readers share).
   */
  Lease inLine(
      Object waitingFor,
      boolean readers,
      boolean unbounded,
      long giveUpAt,
      LeaseEngine<?> engine,
      Attempts attempts)
      throws InterruptedException {
    Line line = anyWaiting(waitingFor) ? join(waitingFor) : null;
    boolean won = false;
    try {
      for (; ; ) {
        if (line != null) {
          awaitTurn(line, unbounded, giveUpAt, engine);
        }
        long releasesSeen = releases.get();
        Lease lease = attempts.next();
        if (lease != null) {
          won = true;
          return lease;
        }
        if (line == null) {
          line = join(waitingFor);
          releasedSince(line, releasesSeen); // a release before the line existed
        }
      }
    } finally {
      if (line != null) {
        leave(waitingFor, line, won);
        if (won && readers) {
          released(waitingFor, 0, false);
        }
      }
    }
  }

  /**
   * Waits until this thread, in {@code line}, may ask again: when it is first and either a release
   * came or the retry pause is over; or at {@code giveUpAt}; or when {@code engine} closes.
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
      long now = engine.ticker.read();
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
      // The pause runs on real time, as a sleep would: a ticker that stands still (a test's) must
      // not stop the first from ever asking again.
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
    private boolean released; // since the first last asked: it asks again without a pause
    private boolean gone; // left by its last thread and out of the map: joiners make a new one
    private boolean watched; // the store was asked for release notices (to undo once)
    private long releasedHere; // fencing token of this service's latest release: not news
    private long noticeToken; // the release being noticed, and a bit per node that told of it
    private final BitSet noticedBy = new BitSet();

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

  /** Releases by this service so far, of anything: see {@link #releasedSince}. */
  private final AtomicLong releases = new AtomicLong();

  /**
   * After joining: a release by this service since {@code seen} (read before the refused attempt)
   * may have found no line to tell, so the first asks at once.
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
            // Under the monitor, as the unwatch: once each, in that order. A set's waiters poll.
            line.watched = true;
            watcher.watch(one, told);
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
    LockSupport.unpark(next); // null: no effect
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
   * This service released {@code resource}, the lease of {@code fencingToken} (0 if none): the
   * first in line asks at once, unless {@code othersWait} (a quorum of nodes told other clients of
   * this release): then the lock is left to them, so services waiting for one lock alternate.
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
    LockSupport.unpark(first);
  }

  /**
   * This service released something that every line whose key {@code serves} may use (a semaphore's
   * permit): the first of each asks at once.
   */
  void releasedWhere(Predicate<Object> serves, long fencingToken) {
    lines.forEach(
        (key, line) -> {
          if (serves.test(key)) {
            released(key, fencingToken, false);
          }
        });
  }

  /**
   * Node {@code node} told that the lease of {@code fencingToken} released {@code resource}. Once a
   * quorum told of the same release, the first in line asks at once; notices of this service's own
   * releases are not news.
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
    LockSupport.unpark(first);
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
