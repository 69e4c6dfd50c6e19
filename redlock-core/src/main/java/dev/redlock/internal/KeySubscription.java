package dev.redlock.internal;

/**
 * A node's announcements of released locks, for the keys added (see {@link LockNode#listen}). The
 * release script publishes on the lock key's name, as a channel, when it deletes the key.
 * Announcements are a hint: they can be lost (a connection drops, a node restarts), and waiters
 * poll as well.
 */
public interface KeySubscription extends AutoCloseable {
  /** Starts announcing releases of {@code key}. */
  void add(String key);

  /** Stops announcing releases of {@code key}. */
  void remove(String key);

  /** Stops listening and closes the connection; its thread ends. Idempotent. */
  @Override
  void close();
}
