package dev.redlock;

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
 * Other clients' waiters are not told (they poll), which is no worse for them than a releasing
 * thread that takes the lock again at once.
 *
 * <p>A line is keyed by what is waited for: a resource, or a set's label ({@code [a, b]}), so
 * waiters for a set are woken by a release of that set and poll for the rest.
 *
 * <p>A line exists only while someone waits in it: no state per resource ever locked.
 */
final class Waiters {
  private final ConcurrentHashMap<String, Line> lines = new ConcurrentHashMap<>();

  /** One resource's waiting threads, first in line first; guarded by its monitor. */
  static final class Line {
    private final ArrayDeque<Thread> threads = new ArrayDeque<>(4);

    /** A release here since the first in line last asked: it asks again without a pause. */
    private boolean released;

    /** Left by its last thread and out of the map: joiners make a new one. */
    private boolean gone;

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

  /** Whether anyone waits for {@code resource}: then a new acquire goes behind them. */
  boolean anyWaiting(String resource) {
    return lines.get(resource) != null;
  }

  /** Puts the calling thread at the end of {@code resource}'s line. */
  Line join(String resource) {
    Thread me = Thread.currentThread();
    for (; ; ) {
      Line line = lines.computeIfAbsent(resource, r -> new Line());
      synchronized (line) {
        if (!line.gone) {
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
  void leave(String resource, Line line, boolean won) {
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
      } else if (wasFirst) {
        next = line.threads.peekFirst();
      }
    }
    if (next != null) {
      LockSupport.unpark(next);
    }
  }

  /** This service released {@code resource}: the first in line asks at once. */
  void released(String resource) {
    Line line = lines.get(resource);
    if (line == null) {
      return; // the usual case: nobody here waits for it
    }
    Thread first;
    synchronized (line) {
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
