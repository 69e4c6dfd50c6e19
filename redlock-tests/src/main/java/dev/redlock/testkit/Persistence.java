package dev.redlock.testkit;

/**
 * How a node keeps its data across a restart. Data lives on {@code /dev/shm} when it exists (see
 * {@link RedisNode}): a SIGKILL loses nothing the process had written, so the modes that lose
 * writes on a crash of the machine are simulated by the kit's own faults ({@link
 * RedisNode#restartFrom(Snapshot)}, {@link RedisNode#restartLosingAofTail(AofMark)}).
 */
public enum Persistence {
  /** No RDB, no AOF: a restarted node comes back empty, as if it never held a lock. */
  NONE,
  /**
   * Append-only file with {@code appendfsync always}: a restarted node has every acknowledged
   * write.
   */
  AOF,
  /**
   * Redis's stock configuration of most installs: {@code save 3600 1}, {@code appendonly no}. The
   * node writes {@code dump.rdb} only when the kit says so ({@link RedisNode#snapshot()}; an hour
   * is longer than any test), and a restart loads the last one: the node comes back with the data
   * of its last snapshot, or empty if none was taken.
   */
  RDB,
  /**
   * {@code appendonly yes} with {@code appendfsync everysec}: a crash of the machine can lose the
   * last second of acknowledged writes. A SIGKILL does not (the writes reached the file), so the
   * loss is applied by {@link RedisNode#restartLosingAofTail(AofMark)}.
   */
  AOF_EVERYSEC
}
