package dev.redlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import redis.clients.jedis.Jedis;

/**
 * A node's RDB faults, which bring it back with an older dataset: the snapshots it takes ({@link
 * RedisNode#snapshot()}), kept aside in its directory, and the restart that loads one in place of
 * its data — its own ({@link RedisNode#restartFrom(Snapshot)}) or a backup of any node ({@link
 * RedisNode#restoreBackup(Snapshot)}). One per node; not thread-safe, as the node is not.
 */
final class Snapshots {
  private static final Duration AOF_SWITCH_TIMEOUT = Duration.ofSeconds(15);

  private final RedisNode node;
  private final AtomicInteger snapshotsTaken = new AtomicInteger();

  Snapshots(RedisNode node) {
    this.node = node;
  }

  /** {@link RedisNode#snapshot()}. */
  Snapshot take() {
    node.requireAnswering("take a snapshot");
    try (Jedis jedis = node.jedis()) {
      String runId = infoField(jedis, "server", "run_id");
      String version = infoField(jedis, "server", "redis_version");
      String reply = jedis.save();
      if (!"OK".equals(reply)) {
        throw new IllegalStateException("SAVE on " + node.uri() + " answered " + reply);
      }
      Instant takenAt = Instant.now();
      Path dump = node.dir().resolve(jedis.configGet("dbfilename").get("dbfilename"));
      Path aside = Files.createDirectories(node.dir().resolve(RedisNode.SNAPSHOTS));
      Path copy = aside.resolve("snapshot-" + snapshotsTaken.incrementAndGet() + ".rdb");
      Files.copy(dump, copy);
      if (!copy.toFile().setReadOnly()) {
        throw new IllegalStateException("cannot make " + copy + " read-only");
      }
      return new Snapshot(copy, takenAt, node.uri(), runId, version);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot copy the snapshot of " + node.uri() + " aside", e);
    }
  }

  /** {@link RedisNode#restartFrom(Snapshot)}. */
  void restartFrom(Snapshot snapshot) {
    Objects.requireNonNull(snapshot, "snapshot");
    if (!snapshot.source().equals(node.uri())) {
      throw new IllegalArgumentException(
          "snapshot was taken on "
              + snapshot.source()
              + ", not on "
              + node.uri()
              + ": use restoreBackup to put another node's data here");
    }
    loadRdb(snapshot);
  }

  /** {@link RedisNode#restoreBackup(Snapshot)}. */
  void restoreBackup(Snapshot backup) {
    Objects.requireNonNull(backup, "backup");
    if (major(backup.redisVersion()) > major(node.binary().version())) {
      throw new IllegalArgumentException(
          "a snapshot of redis "
              + backup.redisVersion()
              + " does not load on redis "
              + node.binary().version()
              + " ("
              + node.uri()
              + ")");
    }
    loadRdb(backup);
  }

  private static int major(String version) {
    try {
      return Integer.parseInt(version.split("\\.")[0]);
    } catch (NumberFormatException e) {
      return Integer.MAX_VALUE; // unknown: let the load itself say
    }
  }

  private void loadRdb(Snapshot snapshot) {
    if (!Files.isReadable(snapshot.file())) {
      throw new IllegalArgumentException(
          "snapshot file " + snapshot.file() + " is gone (its node was closed?)");
    }
    Persistence mode = node.persistence();
    node.stopProcess();
    node.wipeData();
    try {
      Path dump = node.dir().resolve("dump.rdb");
      Files.copy(snapshot.file(), dump);
      if (!dump.toFile().setWritable(true)) {
        throw new IllegalStateException("cannot make " + dump + " writable");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot put " + snapshot.file() + " in place on " + node.uri(), e);
    }
    // Started with appendonly no: with appendonly yes and no AOF, Redis would ignore dump.rdb.
    node.launch(mode == Persistence.RDB ? Persistence.RDB : Persistence.NONE);
    if (mode == Persistence.AOF || mode == Persistence.AOF_EVERYSEC) {
      switchToAof(mode == Persistence.AOF ? "always" : "everysec");
    }
  }

  /** {@code CONFIG SET appendonly yes} on a running node, waiting until its AOF is written. */
  private void switchToAof(String fsync) {
    try (Jedis jedis = node.jedis()) {
      jedis.configSet("appendfsync", fsync);
      jedis.configSet("appendonly", "yes");
      long deadline = System.nanoTime() + AOF_SWITCH_TIMEOUT.toNanos();
      while (!aofWritten(jedis)) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              node.uri() + " did not finish writing its AOF in " + AOF_SWITCH_TIMEOUT);
        }
        RedisNode.pauseBriefly();
      }
    }
  }

  private static boolean aofWritten(Jedis jedis) {
    String info = jedis.info("persistence");
    return field(info, "aof_enabled").equals("1")
        && field(info, "aof_rewrite_in_progress").equals("0")
        && field(info, "aof_rewrite_scheduled").equals("0");
  }

  private static String infoField(Jedis jedis, String section, String name) {
    return field(jedis.info(section), name);
  }

  /** A field of an INFO reply ({@code name:value} lines); "" when absent. */
  private static String field(String info, String name) {
    for (String line : info.split("\r?\n")) {
      if (line.startsWith(name + ":")) {
        return line.substring(name.length() + 1).trim();
      }
    }
    return "";
  }
}
