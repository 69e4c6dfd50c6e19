package dev.redlock;

import dev.redlock.spi.LeaseStore;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The threads of one engine that wait for a resource held elsewhere, in arrival order. Only the
 * first asks the store again (every {@code retryDelay} + jitter, as a lone waiter would); the
 * others wait for their turn, so a client's polling does not grow with its threads. When the store
 * announces that the resource was given back ({@link LeaseStore#whenGivenBack}) by a quorum of its
 * nodes, the first waiter asks at once, without waiting for its next poll. Every client's first
 * waiter hears the same announcements at about the same time, so none is favoured for being in the
 * same process as the holder.
 */
final class WaitingRoom {
  private final LeaseStore<?> store;
  private final ReentrantLock lock = new ReentrantLock();
  private final Map<String, Queue> queues = new HashMap<>(); // guarded by lock
  private boolean closed; // guarded by lock

  WaitingRoom(LeaseStore<?> store) {
    this.store = store;
  }

  /** One resource's waiters. */
  private final class Queue {
    final String resource;
    final ArrayDeque<Place> places = new ArrayDeque<>();
    final Condition changed = lock.newCondition();
    int announced; // announcements heard since the first waiter last asked
    long firstSince = System.nanoTime(); // when the first in line became first
    AutoCloseable watch; // the store's announcements, while anyone waits; null if it has none

    Queue(String resource) {
      this.resource = resource;
    }
  }

  /** A waiter's place in its resource's queue; leave it when done, whatever the outcome. */
  final class Place implements AutoCloseable {
    private final Queue queue;
    private boolean left;

    private Place(Queue queue) {
      this.queue = queue;
    }

    /**
     * Waits until it is this waiter's turn to ask the store: it is first in line and either the
     * store announced a release or {@code pollNanos} have passed; or until {@code maxNanos} have
     * passed, whatever its place (the caller then asks once more, and gives up if that fails).
     */
    void awaitTurn(long pollNanos, long maxNanos) throws InterruptedException {
      long now = System.nanoTime();
      long giveUpAt = now + maxNanos;
      lock.lock();
      try {
        while (true) {
          if (closed) {
            return; // the caller asks once more and finds the service closed
          }
          boolean first = queue.places.peekFirst() == this;
          if (first && queue.announced >= store.quorum()) {
            queue.announced = 0;
            return;
          }
          // The first polls a poll's time after it asked, or after it became first (the one before
          // it may have just taken the lock), never later than when it gives up.
          long pollAt = (queue.firstSince - now > 0 ? queue.firstSince : now) + pollNanos;
          long until = first && pollAt - giveUpAt < 0 ? pollAt : giveUpAt;
          long left = until - System.nanoTime();
          if (left <= 0) {
            if (first) {
              queue.announced = 0;
            }
            return;
          }
          queue.changed.await(left, TimeUnit.NANOSECONDS);
        }
      } finally {
        lock.unlock();
      }
    }

    /** Leaves the queue: the next waiter is first. Idempotent. */
    @Override
    public void close() {
      AutoCloseable watch = null;
      lock.lock();
      try {
        if (left) {
          return;
        }
        left = true;
        if (queue.places.peekFirst() == this) {
          queue.firstSince = System.nanoTime();
        }
        queue.places.remove(this);
        queue.changed.signalAll();
        if (queue.places.isEmpty()) {
          queues.remove(queue.resource);
          watch = queue.watch;
        }
      } finally {
        lock.unlock();
      }
      closeQuietly(watch);
    }
  }

  /** Takes a place at the end of {@code resource}'s queue. */
  Place enter(String resource) {
    Queue queue;
    Place place;
    lock.lock();
    try {
      queue = queues.get(resource);
      boolean first = queue == null;
      if (first) {
        queue = new Queue(resource);
        queues.put(resource, queue);
      }
      place = new Place(queue);
      queue.places.addLast(place);
      if (!first) {
        return place;
      }
    } finally {
      lock.unlock();
    }
    // The first waiter of a resource subscribes, outside the lock (the store may write to nodes).
    Queue q = queue;
    AutoCloseable watch = store.whenGivenBack(resource, () -> announced(q));
    lock.lock();
    try {
      if (queues.get(resource) == queue) {
        queue.watch = watch;
        return place;
      }
    } finally {
      lock.unlock();
    }
    closeQuietly(watch); // everyone left meanwhile
    return place;
  }

  private void announced(Queue queue) {
    lock.lock();
    try {
      queue.announced++;
      queue.changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Wakes every waiter for good (closing): they ask once more and find the service closed. */
  void close() {
    lock.lock();
    try {
      closed = true;
      for (Queue queue : queues.values()) {
        queue.changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }

  private static void closeQuietly(AutoCloseable watch) {
    if (watch != null) {
      try {
        watch.close();
      } catch (Exception e) {
        // a subscription that fails to close is dropped with its connection
      }
    }
  }
}
