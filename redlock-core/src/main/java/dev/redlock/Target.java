package dev.redlock;

import dev.redlock.spi.LeaseRequest;
import dev.redlock.spi.LeaseRequest.Shape;
import java.util.List;

/**
 * What an acquisition is after: one resource, a sorted set of two or more, or one side of a
 * read-write lock.
 *
 * @param name what logs and messages call it: the resource or lock name, or the set as text
 */
record Target(Shape shape, List<String> resources, String name) {

  static Target one(String resource) {
    return new Target(Shape.ONE, List.of(resource), resource);
  }

  /** A sorted set of distinct resources; a set of one is that resource's own lock. */
  static Target all(List<String> sorted) {
    return sorted.size() == 1
        ? one(sorted.get(0))
        : new Target(Shape.ALL, sorted, sorted.toString());
  }

  static Target side(String name, Shape side) {
    return new Target(side, List.of(name), name);
  }

  boolean isSide() {
    return shape == Shape.READ || shape == Shape.WRITE;
  }

  /**
   * The key of the line this service's threads wait in for it ({@link Waiters}): the resource, the
   * list of the set (never equal to a resource's name), or the side itself.
   */
  Object line() {
    return switch (shape) {
      case ONE -> resources.get(0);
      case ALL -> resources;
      case READ, WRITE -> this;
    };
  }

  LeaseRequest request(String token, long ttlMillis, long intentMillis) {
    return new LeaseRequest(shape, resources, token, ttlMillis, intentMillis);
  }

  /** For messages: {@code 'name'}, the set, or the lock's name and side. */
  String describe() {
    return switch (shape) {
      case ONE -> "'" + name() + "'";
      case ALL -> name();
      case READ -> "'" + name() + "' for reading";
      case WRITE -> "'" + name() + "' for writing";
    };
  }
}
