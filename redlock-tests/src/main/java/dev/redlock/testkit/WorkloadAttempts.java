package dev.redlock.testkit;

import dev.redlock.Lease;
import dev.redlock.ReadWriteLock;
import dev.redlock.Redlock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What one attempt of a {@link Workload} thread asks for — a lock, a set, a permit, a side of a
 * read-write lock, as the workload's options say — and the asking itself.
 */
final class WorkloadAttempts {
  private final Workload.Builder options;

  WorkloadAttempts(Workload.Builder options) {
    this.options = options;
  }

  /** What one attempt asks for. */
  enum Shape {
    /** A lock of one resource. */
    LOCK,
    /** A set of 2 or 3 resources at once. */
    SET,
    /** A permit of the semaphore. */
    PERMIT,
    /** The read side of a read-write lock. */
    READ,
    /** The write side of a read-write lock. */
    WRITE
  }

  /** The shape of the next attempt, as the builder's options say. */
  Shape nextShape() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    boolean twoResources = options.resources >= 2;
    if (options.mixed) {
      return switch (random.nextInt(4)) {
        case 0 -> Shape.LOCK;
        case 1 -> twoResources ? Shape.SET : Shape.LOCK;
        case 2 -> Shape.PERMIT;
        default -> random.nextInt(4) == 0 ? Shape.WRITE : Shape.READ;
      };
    }
    if (options.permits > 0) {
      return Shape.PERMIT;
    }
    if (options.readWrite) {
      return random.nextInt(4) == 0 ? Shape.WRITE : Shape.READ;
    }
    return options.multiResource && twoResources && random.nextBoolean() ? Shape.SET : Shape.LOCK;
  }

  /**
   * One attempt of {@code shape} by {@code client}: a wait of {@link #WAIT} ({@code acquire}) when
   * {@code waits}, else one try; empty when the lock was held elsewhere.
   */
  Optional<Lease> attempt(
      Redlock client, dev.redlock.Semaphore semaphore, Shape shape, boolean waits)
      throws InterruptedException {
    String resource = "workload:" + ThreadLocalRandom.current().nextInt(options.resources);
    Duration ttl = options.ttl;
    switch (shape) {
      case PERMIT:
        return waits ? Optional.of(semaphore.acquire(ttl, WAIT)) : semaphore.tryAcquire(ttl);
      case READ:
      case WRITE:
        // Mixed: two read-write locks, however many resources, so that readers and writers of
        // one lock meet as often as in a read-write workload of two (a planted writer that does
        // not look at the readers must be caught).
        String name =
            options.mixed
                ? "workload:" + ThreadLocalRandom.current().nextInt(Math.min(2, options.resources))
                : resource;
        ReadWriteLock rw = client.readWriteLock("workload-rw:" + name);
        ReadWriteLock.Side side = shape == Shape.READ ? rw.readLock() : rw.writeLock();
        return waits ? Optional.of(side.acquire(ttl, WAIT)) : side.tryAcquire(ttl);
      case SET:
        java.util.Set<String> set = randomSet();
        return waits
            ? Optional.of(client.acquireAll(set, ttl, WAIT))
            : client.tryAcquireAll(set, ttl);
      default:
        return waits
            ? Optional.of(client.acquire(resource, ttl, WAIT))
            : client.tryAcquire(resource, ttl);
    }
  }

  /**
   * How long a waiting workload thread waits for the lock (odd threads, in the modes that wait).
   */
  private static final Duration WAIT = Duration.ofMillis(30);

  /** A set of 2 or 3 distinct resources (of at least 2), in a random order. */
  private java.util.Set<String> randomSet() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    int size = Math.min(options.resources, 2 + random.nextInt(2));
    List<String> all = new ArrayList<>();
    for (int i = 0; i < options.resources; i++) {
      all.add("workload:" + i);
    }
    Collections.shuffle(all, random);
    return new java.util.LinkedHashSet<>(all.subList(0, size));
  }
}
