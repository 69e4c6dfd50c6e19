package dev.redlock.testkit;

import java.nio.file.Path;
import java.time.Instant;

/**
 * A position in the append-only file a node is writing, taken by {@link RedisNode#markAof()}:
 * {@link RedisNode#restartLosingAofTail(AofMark)} cuts the file back to it, as a crash of the
 * machine loses what {@code appendfsync everysec} had not yet synced. Immutable.
 *
 * @param node the URI of the node the mark belongs to
 * @param file the AOF that receives new writes: on Redis 7 the {@code *.incr.aof} under {@code
 *     appendonlydir/} named last in the manifest, on Redis 6.2 {@code appendonly.aof}
 * @param fileId the file's identity (device and inode), so a mark on a file that an AOF rewrite
 *     replaced since is refused rather than applied to another file
 * @param size the file's size in bytes when marked: every write acknowledged before the mark is
 *     within it
 * @param takenAt when the mark was taken (this JVM's wall clock)
 */
public record AofMark(String node, Path file, String fileId, long size, Instant takenAt) {
  /** Checks that every component is present and the size is not negative. */
  public AofMark {
    if (node == null || file == null || fileId == null || takenAt == null) {
      throw new IllegalArgumentException("every component of an AofMark must be non-null");
    }
    if (size < 0) {
      throw new IllegalArgumentException("size must be >= 0, was " + size);
    }
  }
}
