package dev.redlock.cli;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import redis.clients.jedis.Jedis;

/**
 * What the restart guard keeps on a node and how it reads it, for {@code doctor} and {@code
 * quarantine}: the life marker {@code {prefix}@life = <run_id>:<d>:<epoch_us>} and the keys the
 * previous version left behind.
 *
 * <p>The key names are computed here from the key prefix until the core's {@code NodeKeys} gives
 * them ({@code lifeKey()}, {@code fenceKey(resource)}); then these should call it.
 */
final class NodeLife {
  private NodeLife() {}

  static String lifeKey(String prefix) {
    return prefix + "@life";
  }

  /** The previous version's epoch marker: read only once, to adopt it on upgrade. */
  static String legacyEpochKey(String prefix) {
    return prefix + "@epoch";
  }

  /** The previous version's hash of fencing counters, replaced by {@code @fence:{resource}}. */
  static String legacyFencesKey(String prefix) {
    return prefix + "@fences";
  }

  /**
   * A parsed life marker.
   *
   * @param runId the run_id of the process that stamped it
   * @param durable whether that process kept every acknowledged write (AOF, appendfsync always)
   * @param epochMicros node clock (µs) from which the node's data is trusted
   */
  record Marker(String runId, boolean durable, long epochMicros) {
    /** The marker in {@code value}, or null if it is not one. */
    static Marker parse(String value) {
      if (value == null) {
        return null;
      }
      String[] parts = value.split(":", -1);
      if (parts.length != 3
          || parts[0].isEmpty()
          || !("0".equals(parts[1]) || "1".equals(parts[1]))) {
        return null;
      }
      try {
        return new Marker(parts[0], "1".equals(parts[1]), Long.parseLong(parts[2]));
      } catch (NumberFormatException e) {
        return null;
      }
    }
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

  /** What the guard makes of a node: voting, out of votes, or not yet known; and why. */
  record GuardView(DoctorCommand.Verdict verdict, String detail) {}

  /**
   * What the guard's next acquire on this node does with what it finds there (the design's guard,
   * steps 1–4), and whether the node is out of votes now.
   *
   * @param marker the life marker, or null when there is none
   * @param runId the node's run_id now
   * @param durableNow whether the node keeps every acknowledged write now, as a client sees it
   * @param nowMicros the node clock
   * @param startedMicros when the node process started, by its clock
   * @param legacyEpochMicros the previous version's epoch marker, or null
   */
  static GuardView guard(
      Marker marker,
      String runId,
      boolean durableNow,
      long nowMicros,
      long startedMicros,
      Long legacyEpochMicros,
      Duration maxTtl) {
    long maxTtlMicros = maxTtl.toNanos() / 1000;
    String quarantineOfMaxTtl = "a quarantine of maxTtl (" + Durations.format(maxTtl) + ")";
    if (marker == null) {
      if (legacyEpochMicros != null && nowMicros - startedMicros >= maxTtlMicros) {
        long epoch = Math.max(legacyEpochMicros, startedMicros);
        return left(
            "no life marker yet; the first acquire adopts the previous version's epoch marker"
                + " (the process has been up longer than maxTtl)",
            epoch,
            nowMicros,
            maxTtlMicros);
      }
      return new GuardView(
          DoctorCommand.Verdict.INFO,
          (legacyEpochMicros == null
                  ? "no life marker yet (a new node, or its data is gone)"
                  : "no life marker yet, and the process has been up less than maxTtl, so the"
                      + " previous version's epoch marker is not adopted")
              + ": the first acquire starts "
              + quarantineOfMaxTtl
              + (legacyEpochMicros == null
                  ? "; if the node is new and never served a lock, 'redlock init-nodes' lets it"
                      + " vote at once"
                  : ""));
    }
    if (!marker.runId().equals(runId)) {
      String restarted =
          "restarted since the marker was stamped (marker run_id "
              + shortId(marker.runId())
              + ", node "
              + shortId(runId)
              + ")";
      if (marker.durable() && durableNow) {
        return left(
            restarted
                + "; both lives keep every write (AOF, appendfsync always): the next"
                + " acquire adopts the marker",
            marker.epochMicros(),
            nowMicros,
            maxTtlMicros);
      }
      return new GuardView(
          DoctorCommand.Verdict.WARN,
          restarted
              + " and not both lives kept every write (AOF with appendfsync always): the next"
              + " acquire starts "
              + quarantineOfMaxTtl);
    }
    return left(
        "marker stamped by this process life", marker.epochMicros(), nowMicros, maxTtlMicros);
  }

  private static GuardView left(String why, long epochMicros, long nowMicros, long maxTtlMicros) {
    long leftMicros = maxTtlMicros - (nowMicros - epochMicros);
    if (leftMicros > 0) {
      return new GuardView(
          DoctorCommand.Verdict.WARN,
          why
              + ": quarantined, out of votes for "
              + Durations.format(Duration.ofNanos(leftMicros * 1000))
              + " more (until "
              + instant(epochMicros + maxTtlMicros)
              + " by the node's clock)");
    }
    return new GuardView(
        DoctorCommand.Verdict.OK,
        why + ": votes (data trusted since " + instant(epochMicros) + ", over maxTtl ago)");
  }
}
