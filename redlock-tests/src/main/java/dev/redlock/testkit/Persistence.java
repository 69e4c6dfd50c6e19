package dev.redlock.testkit;

/** How a node keeps its data across a restart. */
public enum Persistence {
  /** No RDB, no AOF: a restarted node comes back empty, as if it never held a lock. */
  NONE,
  /**
   * Append-only file with {@code appendfsync always}: a restarted node has every acknowledged
   * write.
   */
  AOF
}
