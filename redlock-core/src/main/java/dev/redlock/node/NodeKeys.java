package dev.redlock.node;

/**
 * The names of what the lock keeps on every node, and the guard's setting, as the scripts need
 * them. A resource's lock key is {@code keyPrefix + resource}, and every other key of that resource
 * is named after its lock key, so two configurations that spell the same lock key (prefix {@code
 * lock} with resource {@code :x}, prefix {@code lock:} with resource {@code x}) share one lock and
 * one fencing counter. The guard's own keys are {@code keyPrefix + "@..."}: no prefix contains
 * {@code @}, and no resource may end like one of them ({@link #checkResource}).
 *
 * @param keyPrefix the prefix of every lock key
 * @param lifeKey the life marker {@code <run_id>:<db>:<keyPrefix>:<durable>:<epoch µs>}: which
 *     process, database and deployment stamped the node's data, and from when (node clock) it is
 *     trusted (restart_guard.lua, docs/fencing.md)
 * @param witnessKey the restart guard's witness: present, in Redis's {@code raw} encoding, only
 *     while the data is the one the marker's process stamped (restart_guard.lua)
 * @param maxTtlMillis the longest ttl any client may use: how long a node with untrusted data stays
 *     out, and how long a fencing counter outlives the node clock
 * @param guard whether the restart guard is on (off only in tests that show what it prevents)
 * @param trustDurable whether a node restarted from its fsynced AOF keeps its vote
 */
public record NodeKeys(
    String keyPrefix,
    String lifeKey,
    String witnessKey,
    long maxTtlMillis,
    boolean guard,
    boolean trustDurable) {
  private static final char RESERVED = '@';
  private static final String FENCE = RESERVED + "fence";
  private static final String LIFE = RESERVED + "life";
  private static final String WITNESS = RESERVED + "witness";
  private static final String READ_WRITE = RESERVED + "rw:";

  public static NodeKeys of(String keyPrefix, long maxTtlMillis, boolean guard) {
    return of(keyPrefix, maxTtlMillis, guard, false);
  }

  public static NodeKeys of(
      String keyPrefix, long maxTtlMillis, boolean guard, boolean trustDurable) {
    return new NodeKeys(
        keyPrefix, keyPrefix + LIFE, keyPrefix + WITNESS, maxTtlMillis, guard, trustDurable);
  }

  /**
   * Refuses a key prefix that contains {@code @}, so that the first {@code @} of a reserved key
   * ends its prefix and no prefix's lock key is another's reserved key.
   */
  public static String checkKeyPrefix(String keyPrefix) {
    if (keyPrefix.indexOf(RESERVED) >= 0) {
      throw new IllegalArgumentException(
          "keyPrefix must not contain '@' (it marks the nodes' own keys), was '" + keyPrefix + "'");
    }
    return keyPrefix;
  }

  /**
   * Refuses a resource whose lock key could be another key the lock keeps, under any prefix: one
   * that starts with {@code @}, contains {@code @rw:} or ends with {@code @fence}, {@code @life} or
   * {@code @witness}. (No prefix contains {@code @}, so a lock key can equal such a key only if its
   * resource holds that key's tail.) Other {@code @}s, as in {@code user@example.com}, are fine.
   */
  public static void checkResource(String resource) {
    if (resource.charAt(0) == RESERVED
        || resource.contains(READ_WRITE)
        || resource.endsWith(FENCE)
        || resource.endsWith(LIFE)
        || resource.endsWith(WITNESS)) {
      throw new IllegalArgumentException(
          "resource must not start with '@', contain '@rw:', or end with '@fence', '@life' or"
              + " '@witness' (the nodes' own keys), was '"
              + resource
              + "'");
    }
  }

  /**
   * The read-write lock {@code name}'s writer key, readers (a sorted set of owner token to expiry)
   * and writer intent mark. Under {@code keyPrefix + "@rw:"}, which no lock key reaches, so a plain
   * lock of the same name never touches them. Its one fencing counter is the writer key's.
   */
  public static String[] readWriteKeys(String keyPrefix, String name) {
    String base = keyPrefix + READ_WRITE;
    return new String[] {base + "w:" + name, base + "r:" + name, base + "i:" + name};
  }

  /** The fencing counter of {@code resource}: a string key with a ttl, one per resource. */
  public String fenceKey(String resource) {
    return fenceKeyOfLock(keyPrefix + resource);
  }

  /** The fencing counter of {@code lockKey}: one per lock key, however it is spelled. */
  public static String fenceKeyOfLock(String lockKey) {
    return lockKey + FENCE;
  }

  /**
   * Who a connection reached, as the restart guard's life marker names it: the process ({@code
   * run_id}), the database and this deployment's key prefix (restart_guard.lua).
   */
  String identity(String runId, int database) {
    return runId + ":" + database + ":" + keyPrefix;
  }

  public String maxTtlMillisText() {
    return Long.toString(maxTtlMillis);
  }

  String guardFlag() {
    return guard ? "1" : "0";
  }
}
