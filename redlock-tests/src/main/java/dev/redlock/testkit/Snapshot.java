package dev.redlock.testkit;

import java.nio.file.Path;
import java.time.Instant;

/**
 * A copy of a node's {@code dump.rdb}, taken by {@link RedisNode#snapshot()}: the node's whole
 * dataset at one moment, kept aside so a later fault can bring a node back with it ({@link
 * RedisNode#restartFrom(Snapshot)}, {@link RedisNode#restoreBackup(Snapshot)}). Immutable; the file
 * lives in the directory of the node that took it and is deleted when that node is closed.
 *
 * @param file the copied RDB file (never written again)
 * @param takenAt when the node finished writing it (this JVM's wall clock)
 * @param source the URI of the node it was taken from
 * @param runId the {@code run_id} (INFO server) of the process it was taken from
 * @param redisVersion the version of that process, like {@code 7.0.15}: an RDB loads only on a
 *     Redis of the same major version or newer
 */
public record Snapshot(
    Path file, Instant takenAt, String source, String runId, String redisVersion) {
  /** Checks that every component is present. */
  public Snapshot {
    if (file == null
        || takenAt == null
        || source == null
        || runId == null
        || redisVersion == null) {
      throw new IllegalArgumentException("every component of a Snapshot must be non-null");
    }
  }
}
