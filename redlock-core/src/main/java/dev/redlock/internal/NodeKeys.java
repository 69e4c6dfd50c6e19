package dev.redlock.internal;

/**
 * What every node keeps besides lock keys, and the guard's setting, as the scripts need them. The
 * names start with {@code keyPrefix + "@"}, which is why resources may not start with {@code @}.
 *
 * @param keyPrefix the prefix of every lock key
 * @param lifeKey the life marker {@code <run_id>:<durable>:<epoch µs>}: which process life stamped
 *     the node's data, and from when (node clock) it is trusted (docs/fencing.md)
 * @param legacyEpochKey the previous version's marker, read only to adopt it on upgrade
 * @param maxTtlMillis the longest ttl any client may use: how long a node with untrusted data stays
 *     out, and how long a fencing counter outlives the node clock
 * @param guard whether the restart guard is on (off only in tests that show what it prevents)
 * @param trustDurable whether a node restarted from its fsynced AOF keeps its vote
 */
public record NodeKeys(
    String keyPrefix,
    String lifeKey,
    String legacyEpochKey,
    long maxTtlMillis,
    boolean guard,
    boolean trustDurable) {
  /** The reserved first character of names that are not resources. */
  public static final char RESERVED = '@';

  private static final String FENCE = RESERVED + "fence:";

  public static NodeKeys of(String keyPrefix, long maxTtlMillis, boolean guard) {
    return of(keyPrefix, maxTtlMillis, guard, false);
  }

  public static NodeKeys of(
      String keyPrefix, long maxTtlMillis, boolean guard, boolean trustDurable) {
    return new NodeKeys(
        keyPrefix,
        keyPrefix + RESERVED + "life",
        keyPrefix + RESERVED + "epoch",
        maxTtlMillis,
        guard,
        trustDurable);
  }

  /** The fencing counter of {@code resource}: a string key with a ttl, one per resource. */
  public String fenceKey(String resource) {
    return keyPrefix + FENCE + resource;
  }

  /** The fencing counter of the resource whose lock key is {@code lockKey}. */
  String fenceKeyOfLock(String lockKey) {
    return keyPrefix + FENCE + lockKey.substring(keyPrefix.length());
  }

  public String maxTtlMillisText() {
    return Long.toString(maxTtlMillis);
  }

  String guardFlag() {
    return guard ? "1" : "0";
  }
}
