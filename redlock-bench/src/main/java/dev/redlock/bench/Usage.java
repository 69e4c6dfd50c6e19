package dev.redlock.bench;

import dev.redlock.testkit.CommandStats;
import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * What the nodes and this process have used so far: CPU time, commands, script calls, allocated
 * bytes. A scenario reads them before and after and reports the difference.
 */
final class Usage {
  private Usage() {}

  /** CPU seconds used so far by the nodes (INFO cpu, user + sys, summed) and by this process. */
  record Cpu(double nodeSeconds, double clientSeconds) {
    static Cpu read(List<String> uris) {
      double nodes = 0;
      for (String uri : uris) {
        try (Jedis jedis = new Jedis(RawFloors.host(uri))) {
          nodes += cpuSeconds(jedis);
        }
      }
      return new Cpu(nodes, processSeconds());
    }

    /** The CPU time one node has used so far: INFO cpu's user + sys, to the microsecond. */
    static double cpuSeconds(Jedis node) {
      double seconds = 0;
      for (String line : node.info("cpu").split("\r?\n")) {
        if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
          seconds += Double.parseDouble(line.substring(line.indexOf(':') + 1).trim());
        }
      }
      return seconds;
    }

    /** The CPU time this process has used so far, every thread of it (HotSpot, to the ns). */
    static double processSeconds() {
      com.sun.management.OperatingSystemMXBean os =
          (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
      return os.getProcessCpuTime() / 1e9;
    }

    Cpu minus(Cpu earlier) {
      return new Cpu(nodeSeconds - earlier.nodeSeconds, clientSeconds - earlier.clientSeconds);
    }

    /** "nodes 140%, client 55%": percent of one core over {@code millis} of wall time. */
    String percentOf(long millis) {
      double wall = millis / 1000.0;
      return String.format(
          Locale.ROOT,
          "nodes %.0f%%, client %.0f%%",
          100 * nodeSeconds / wall,
          100 * clientSeconds / wall);
    }
  }

  /** The CPU seconds the nodes have used so far, read over connections kept open. */
  static double nodeCpuSeconds(List<Jedis> nodes) {
    double seconds = 0;
    for (Jedis node : nodes) {
      seconds += Cpu.cpuSeconds(node);
    }
    return seconds;
  }

  /**
   * Commands the nodes executed so far, not counting INFO itself. Redis counts the commands a
   * script runs too: an acquire on one node is its EVALSHA and the 4 calls inside.
   */
  static long nodeCommands(List<String> uris) {
    return calls(uris, command -> !command.equals("info"));
  }

  /** Scripts the nodes were asked to run (EVALSHA, EVAL): requests, as a client sends them. */
  static long scriptCalls(List<String> uris) {
    return calls(uris, command -> command.equals("evalsha") || command.equals("eval"));
  }

  private static long calls(List<String> uris, Predicate<String> counted) {
    long total = 0;
    for (String uri : uris) {
      HostAndPort host = RawFloors.host(uri);
      total += CommandStats.calls(host.getHost(), host.getPort(), counted);
    }
    return total;
  }

  /** Bytes allocated by every live thread of this JVM so far (HotSpot). */
  static long allocatedBytes() {
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long total = 0;
    for (long bytes : threads.getThreadAllocatedBytes(threads.getAllThreadIds())) {
      if (bytes > 0) {
        total += bytes;
      }
    }
    return total;
  }
}
