package dev.redlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.Objects;
import java.util.stream.Stream;
import redis.clients.jedis.Jedis;

/**
 * A node's AOF fault, which brings it back without the last writes it acknowledged: the mark of
 * where its AOF ends ({@link RedisNode#markAof()}) and the restart that cuts the file back to it
 * ({@link RedisNode#restartLosingAofTail(AofMark)}). One per node; not thread-safe, as the node is
 * not.
 */
final class AofTail {
  private final RedisNode node;

  AofTail(RedisNode node) {
    this.node = node;
  }

  /** {@link RedisNode#markAof()}. */
  AofMark mark() {
    Persistence persistence = node.persistence();
    if (persistence != Persistence.AOF_EVERYSEC) {
      throw new IllegalStateException(
          "markAof needs an AOF_EVERYSEC node; "
              + node.uri()
              + " is "
              + persistence
              + (persistence == Persistence.AOF
                  ? " (appendfsync always: no acknowledged write is ever lost)"
                  : " (no AOF)"));
    }
    node.requireAnswering("mark its AOF");
    // Acknowledged is not yet written: with appendfsync everysec a node that is still fsyncing
    // postpones writing its AOF buffer (up to 2 s) and replies meanwhile. The mark is taken once
    // the buffer has reached the file, so every write acknowledged before it lies before the mark
    // (seen once on a loaded machine: a value set just before the mark was lost with the tail).
    org.awaitility.Awaitility.await("the AOF buffer of " + node.uri() + " written to its file")
        .atMost(java.time.Duration.ofSeconds(10))
        .pollInterval(java.time.Duration.ofMillis(5))
        .until(this::aofBufferWritten);
    Path file = currentAof();
    try {
      BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
      return new AofMark(
          node.uri(), file, String.valueOf(attributes.fileKey()), attributes.size(), Instant.now());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  /** Whether the node's AOF buffer is empty (INFO persistence), every write handed to the file. */
  private boolean aofBufferWritten() {
    try (Jedis jedis = node.jedis()) {
      return jedis.info("persistence").contains("aof_buffer_length:0\r");
    }
  }

  /** {@link RedisNode#restartLosingAofTail(AofMark)}. */
  void restartLosingTail(AofMark mark) {
    Objects.requireNonNull(mark, "mark");
    if (!mark.node().equals(node.uri())) {
      throw new IllegalArgumentException(
          "the mark is of " + mark.node() + ", not of " + node.uri());
    }
    node.stopProcess();
    try {
      if (!Files.exists(mark.file())) {
        throw new IllegalStateException(
            mark.file() + " is gone: the AOF was rewritten since the mark; mark again");
      }
      BasicFileAttributes attributes = Files.readAttributes(mark.file(), BasicFileAttributes.class);
      if (!String.valueOf(attributes.fileKey()).equals(mark.fileId())
          || attributes.size() < mark.size()) {
        throw new IllegalStateException(
            mark.file() + " was replaced or cut since the mark (an AOF rewrite?); mark again");
      }
      try (FileChannel channel = FileChannel.open(mark.file(), StandardOpenOption.WRITE)) {
        channel.truncate(mark.size());
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot cut " + mark.file(), e);
    }
    node.launchAs(Persistence.AOF_EVERYSEC);
  }

  /**
   * The AOF file that receives new writes: on Redis 7 the last {@code type i} file of {@code
   * appendonlydir/*.manifest}, on Redis 6.2 {@code appendonly.aof} in the data directory.
   */
  private Path currentAof() {
    Path dir = node.dir();
    Path aofDir = dir.resolve("appendonlydir");
    if (Files.isDirectory(aofDir)) {
      try (Stream<Path> files = Files.list(aofDir)) {
        Path manifest =
            files
                .filter(p -> p.getFileName().toString().endsWith(".manifest"))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no AOF manifest in " + aofDir));
        String incr = null;
        long seq = -1;
        for (String line : Files.readAllLines(manifest)) {
          // file appendonly.aof.1.incr.aof seq 1 type i
          String[] words = line.trim().split("\\s+");
          String name = null;
          String type = null;
          long lineSeq = -1;
          for (int i = 0; i + 1 < words.length; i += 2) {
            switch (words[i]) {
              case "file" -> name = words[i + 1];
              case "seq" -> lineSeq = Long.parseLong(words[i + 1]);
              case "type" -> type = words[i + 1];
              default -> {}
            }
          }
          if ("i".equals(type) && name != null && lineSeq > seq) {
            incr = name;
            seq = lineSeq;
          }
        }
        if (incr == null) {
          throw new IllegalStateException("no incremental AOF in " + manifest);
        }
        return aofDir.resolve(incr);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read the AOF manifest in " + aofDir, e);
      }
    }
    Path single = dir.resolve("appendonly.aof");
    if (!Files.exists(single)) {
      throw new IllegalStateException("no AOF in " + dir);
    }
    return single;
  }
}
