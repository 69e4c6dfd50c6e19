package dev.redlock.testkit;

import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import redis.clients.jedis.Jedis;

/**
 * Counts the commands a node has executed, from {@code INFO commandstats}: how tests and the bench
 * see how much work the lock asked of the nodes.
 */
public final class CommandStats {
  // "cmdstat_evalsha:calls=12,usec=5,...,rejected_calls=0,failed_calls=0": the first calls= only.
  private static final Pattern LINE = Pattern.compile("^cmdstat_([^:]+):calls=(\\d+),");

  private CommandStats() {}

  /**
   * The calls of every command whose (lower-case) name {@code command} accepts, e.g. {@code
   * "evalsha"::equals}.
   */
  public static long calls(String host, int port, Predicate<String> command) {
    long total = 0;
    try (Jedis jedis = new Jedis(host, port, 2000)) {
      for (String line : jedis.info("commandstats").split("\r?\n")) {
        Matcher m = LINE.matcher(line);
        if (m.find() && command.test(m.group(1))) {
          total += Long.parseLong(m.group(2));
        }
      }
    }
    return total;
  }

  /** The same, for a node of this kit. */
  public static long calls(RedisNode node, Predicate<String> command) {
    return calls("127.0.0.1", node.port(), command);
  }
}
