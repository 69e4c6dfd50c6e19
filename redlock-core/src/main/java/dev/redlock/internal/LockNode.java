package dev.redlock.internal;

/**
 * The narrow seam between the algorithm and one Redis node: three verbs, each one round trip.
 * Every verb may block up to the node timeout and throws on transport or Redis errors; the
 * algorithm turns those into votes. Implementations must be thread-safe.
 */
public interface LockNode extends AutoCloseable {

  /** The node's URI without credentials, for logs and accounts. */
  String name();

  /** {@code SET key token NX PX ttl}: true if the key was set, false if it already existed. */
  boolean tryLock(String key, String token, long ttlMillis);

  /** Owner-checked {@code PEXPIRE}: true if the key held {@code token} and was extended. */
  boolean extend(String key, String token, long ttlMillis);

  /** Owner-checked {@code DEL}: true if the key held {@code token} and was deleted. */
  boolean release(String key, String token);

  /** Closes the node's connections. Idempotent. */
  @Override
  void close();
}
