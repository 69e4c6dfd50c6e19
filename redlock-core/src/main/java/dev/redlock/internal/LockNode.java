package dev.redlock.internal;

/**
 * The narrow seam between the algorithm and one Redis node: three verbs, each one round trip.
 * Every verb may block up to the node timeout and throws on transport or Redis errors; the
 * algorithm turns those into votes. Implementations must be thread-safe.
 */
public interface LockNode extends AutoCloseable {

  /** The node's URI without credentials, for logs and accounts. */
  String name();

  /** The reply of {@link #tryLock} when the key is held by another owner. */
  long HELD = 0;

  /**
   * The acquire script: restart guard, {@code SET key token NX PX ttl}, fencing counter.
   *
   * @return the node's fencing counter for this key (> 0) if the key was set; {@link #HELD} if it
   *     already existed; {@code -(ms of quarantine left + 1)} if the node's data is younger than
   *     maxTtl, in which case nothing was set
   */
  long tryLock(String key, String token, long ttlMillis);

  /** Owner-checked: raises the key's fencing counter to at least {@code fence}; false if the key is not ours. */
  boolean raiseFence(String key, String token, long fence);

  /** Owner-checked {@code PEXPIRE}: true if the key held {@code token} and was extended. */
  boolean extend(String key, String token, long ttlMillis);

  /** Owner-checked {@code DEL}: true if the key held {@code token} and was deleted. */
  boolean release(String key, String token);

  /** Closes the node's connections. Idempotent. */
  @Override
  void close();
}
