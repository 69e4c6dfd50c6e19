package dev.redlock.node;

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

  /** Where a read-write lock's keys live: no resource may contain it ({@link #checkResource}). */
  private static final String READ_WRITE = RESERVED + "rw:";

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

  /**
   * Refuses a key prefix that could make one prefix's lock key another's reserved key: it must not
   * contain {@code @}, so that the first {@code @} of a reserved key ends its prefix.
   *
   * @throws IllegalArgumentException naming the rule
   */
  public static String checkKeyPrefix(String keyPrefix) {
    if (keyPrefix.indexOf(RESERVED) >= 0) {
      throw new IllegalArgumentException(
          "keyPrefix must not contain '"
              + RESERVED
              + "' (it marks the nodes' own keys), was '"
              + keyPrefix
              + "'");
    }
    return keyPrefix;
  }

  /**
   * Refuses a resource whose key could be a reserved key, of this prefix or of any other: it must
   * not start with {@code @}, contain {@code @fence:} or {@code @rw:} (a read-write lock's keys),
   * or end with {@code @life} or {@code @epoch}. (With no {@code @} in any prefix, a reserved key's
   * first {@code @} ends its prefix; so a lock key can equal one only if its resource holds that
   * key's reserved tail.) Other {@code @}s, as in {@code user@example.com}, are fine.
   *
   * @throws IllegalArgumentException naming the rule
   */
  public static void checkResource(String resource) {
    if (resource.charAt(0) == RESERVED
        || resource.contains(FENCE)
        || resource.contains(READ_WRITE)
        || resource.endsWith(RESERVED + "life")
        || resource.endsWith(RESERVED + "epoch")) {
      throw new IllegalArgumentException(
          "resource must not start with '"
              + RESERVED
              + "', contain '"
              + FENCE
              + "' or '"
              + READ_WRITE
              + "', or end with '"
              + RESERVED
              + "life' or '"
              + RESERVED
              + "epoch' (the nodes' own keys), was '"
              + resource
              + "'");
    }
  }

  /**
   * The keys of the read-write lock {@code name} under {@code keyPrefix}: its writer key, its
   * readers (a sorted set of owner token to expiry), its writer intent mark, in that order. They
   * sit under {@code keyPrefix + "@rw:"}, which no lock key reaches ({@link #checkResource}), so a
   * plain lock of the same name can never hold, refuse or delete them. The lock's one fencing
   * counter, shared by both sides, is the writer key's ({@link #fenceKeyOfLock}).
   */
  public static String[] readWriteKeys(String keyPrefix, String name) {
    String base = keyPrefix + READ_WRITE;
    return new String[] {base + "w:" + name, base + "r:" + name, base + "i:" + name};
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
