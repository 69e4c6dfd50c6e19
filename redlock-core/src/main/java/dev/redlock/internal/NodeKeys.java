package dev.redlock.internal;

/**
 * What every node keeps besides lock keys, and the guard's setting, as the acquire script needs
 * them. The names start with {@code keyPrefix + "@"}, which is why resources may not start with
 * {@code @}.
 *
 * @param epochKey the marker saying, in the node's own clock (µs), when its current data began
 * @param fencesKey the hash of fencing counters, one field per lock key, never expiring
 * @param maxTtlMillis the longest ttl any client may use: how long a node with young data stays out
 * @param guard whether the restart guard is on (off only in tests that show what it prevents)
 */
public record NodeKeys(String epochKey, String fencesKey, long maxTtlMillis, boolean guard) {
  /** The reserved first character of names that are not resources. */
  public static final char RESERVED = '@';

  public static NodeKeys of(String keyPrefix, long maxTtlMillis, boolean guard) {
    return new NodeKeys(
        keyPrefix + RESERVED + "epoch", keyPrefix + RESERVED + "fences", maxTtlMillis, guard);
  }

  String maxTtlMillisText() {
    return Long.toString(maxTtlMillis);
  }

  String guardFlag() {
    return guard ? "1" : "0";
  }
}
