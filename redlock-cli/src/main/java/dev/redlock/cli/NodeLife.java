package dev.redlock.cli;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import redis.clients.jedis.Jedis;

/**
 * The names of what the restart guard keeps on a node ({@code {prefix}@life}, {@code
 * {prefix}@witness}) and of the keys the previous version left behind, and how the commands read a
 * node's INFO and clock.
 *
 * <p>The key names are computed here from the key prefix until the core's {@code NodeKeys} gives
 * them ({@code lifeKey()}, {@code fenceKey(resource)}); then these should call it.
 */
final class NodeLife {
  private NodeLife() {}

  static String lifeKey(String prefix) {
    return prefix + "@life";
  }

  static String witnessKey(String prefix) {
    return prefix + "@witness";
  }

  /** The previous version's epoch marker, no longer read. */
  static String legacyEpochKey(String prefix) {
    return prefix + "@epoch";
  }

  /** The previous version's hash of fencing counters, replaced by {@code @fence:{resource}}. */
  static String legacyFencesKey(String prefix) {
    return prefix + "@fences";
  }

  /** The first 8 characters of a run_id: enough to tell lives apart on screen. */
  static String shortId(String runId) {
    return runId == null ? "?" : runId.substring(0, Math.min(8, runId.length()));
  }

  /** {@code INFO section} as key/value pairs. */
  static Map<String, String> info(Jedis jedis, String section) {
    Map<String, String> values = new HashMap<>();
    for (String line : jedis.info(section).split("\r?\n")) {
      int colon = line.indexOf(':');
      if (colon > 0 && !line.startsWith("#")) {
        values.put(line.substring(0, colon), line.substring(colon + 1).trim());
      }
    }
    return values;
  }

  /** The node's clock ({@code TIME}) in µs. */
  static long nodeMicros(Jedis jedis) {
    var time = jedis.time();
    return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
  }

  /** A node-clock instant in µs, to the second, for people. */
  static String instant(long micros) {
    return Instant.ofEpochSecond(micros / 1_000_000).truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /** 12s, 5m 12s, 2h 13m, 3d 4h. */
  static String uptime(long seconds) {
    if (seconds < 60) {
      return seconds + "s";
    }
    if (seconds < 3600) {
      return seconds / 60 + "m " + seconds % 60 + "s";
    }
    if (seconds < 86_400) {
      return seconds / 3600 + "h " + seconds % 3600 / 60 + "m";
    }
    return seconds / 86_400 + "d " + seconds % 86_400 / 3600 + "h";
  }
}
