package dev.redlock.spi;

import java.util.List;
import java.util.Objects;

/**
 * What one attempt asks a store for, for every kind of lease.
 *
 * @param shape one resource, several at once, or one side of a read-write lock
 * @param resources the resource ({@link Shape#ONE}), the sorted distinct resources ({@link
 *     Shape#ALL}, 2 to {@link dev.redlock.Redlock#MAX_RESOURCES}), or the read-write lock's name
 *     ({@link Shape#READ}, {@link Shape#WRITE}); each already checked by the store's {@link
 *     LeaseStore#checkResource}
 * @param token the owner's random token: only its holder may renew or give the lease back
 * @param ttlMillis how long the store keeps the lease if it is never renewed or given back
 * @param intentMillis for {@link Shape#WRITE} only: how long a refused writer keeps new readers
 *     out, at most {@code ttlMillis}; else 0
 */
public record LeaseRequest(
    Shape shape, List<String> resources, String token, long ttlMillis, long intentMillis) {

  /** What a lease covers. */
  public enum Shape {
    /** One resource. */
    ONE,
    /** Every one of two or more resources at once, all or none. */
    ALL,
    /** The read side of a read-write lock: shared with other readers, never with a writer. */
    READ,
    /** The write side of a read-write lock: alone. */
    WRITE
  }

  /**
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code resources} does not fit {@code shape}, {@code
   *     ttlMillis} is not positive, or {@code intentMillis} is negative or set for another shape
   *     than {@link Shape#WRITE}
   */
  public LeaseRequest {
    Objects.requireNonNull(shape, "shape must not be null");
    resources = List.copyOf(resources);
    Objects.requireNonNull(token, "token must not be null");
    if (shape == Shape.ALL ? resources.size() < 2 : resources.size() != 1) {
      String count = shape == Shape.ALL ? "2 or more" : "1";
      throw new IllegalArgumentException(
          "resources of a " + shape + " request must be " + count + ", were " + resources.size());
    }
    if (ttlMillis <= 0) {
      throw new IllegalArgumentException("ttlMillis must be positive, was " + ttlMillis);
    }
    if (intentMillis < 0 || (intentMillis > 0 && shape != Shape.WRITE)) {
      throw new IllegalArgumentException(
          "intentMillis must be 0, or positive for a WRITE request; was "
              + intentMillis
              + " for "
              + shape);
    }
  }

  /** Shows the shape, name and times; never the owner token, which must not reach a log. */
  @Override
  public String toString() {
    String intent = intentMillis > 0 ? ", intent " + intentMillis + " ms" : "";
    return "LeaseRequest{" + shape + " " + name() + ", ttl " + ttlMillis + " ms" + intent + "}";
  }

  /** What logs and messages call the lease: its resource or lock name, or the set as text. */
  public String name() {
    return shape == Shape.ALL ? resources.toString() : resources.get(0);
  }
}
