package dev.redlock.quorum;

import dev.redlock.spi.LeaseRequest.Shape;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Per key, the last release (or roll-back) this store sent that some node has not settled yet: a
 * release returns once a quorum confirmed it. The next take of the key follows it node by node
 * ({@link RequestOrder}), or the new {@code SET NX} could reach a straggling node before our own
 * release and be refused by our own old key; a take whose turn on a node comes after its vote's
 * deadline does not send there at all, so a chain behind a slow node cannot grow. An entry lives
 * from the moment its release is sent until it has settled on every node. Only this client's own
 * releases are followed: another process's take may still meet our key on a slow node, as it would
 * meet any holder's.
 */
final class UnsettledReleases {
  private final ConcurrentMap<String, Ballot> releases = new ConcurrentHashMap<>();

  /** The last unsettled release of {@code key}, or null. */
  Ballot get(String key) {
    return releases.get(key);
  }

  /**
   * The keys whose next take follows a release of a lease of {@code shape}: each of a set's keys;
   * else only the lease's first key (null), which for a read-write lock is its writer key, under
   * which both sides look up what to follow.
   */
  static String[] keys(Shape shape, String[] keys) {
    return shape == Shape.ALL ? keys : null;
  }

  /**
   * Makes the next take of {@code key} (or of any of {@code keys}) follow {@code release} until it
   * has settled everywhere.
   */
  void followUntilSettled(String key, String[] keys, Ballot release) {
    put(key, keys, release);
    release.whenAllSettled(() -> remove(key, keys, release));
  }

  void put(String key, String[] keys, Ballot release) {
    if (keys == null) {
      releases.put(key, release);
    } else {
      for (String k : keys) {
        releases.put(k, release);
      }
    }
  }

  void remove(String key, String[] keys, Ballot release) {
    if (keys == null) {
      releases.remove(key, release);
    } else {
      for (String k : keys) {
        releases.remove(k, release);
      }
    }
  }
}
