package dev.redlock.node;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import redis.clients.jedis.Connection;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.util.SafeEncoder;

/**
 * What one connection learned, once, about the process it reached: the restart guard's inputs. Read
 * when the connection is made (a restart always breaks connections, so it cannot go stale in the
 * way that matters), in one pipelined round trip, never on the acquire path.
 *
 * @param runId the process's {@code run_id}: a new one after every restart
 * @param durable whether the process keeps every write it acknowledged ({@code appendonly yes},
 *     {@code appendfsync always}, {@code no-appendfsync-on-rewrite no}); false when {@code CONFIG
 *     GET} is refused
 * @param aofLoaded durable, a master that was not a replica in this life, and its data came from
 *     its AOF at start: no AOF rewrite has run or is due since (a node switched to AOF at runtime
 *     after loading an RDB rewrites at once, and so does a replica's full sync)
 * @param startedAtMicros when the process started, on the node's clock; -1 if unknown
 * @param unknown why the guard cannot trust this node at all (INFO refused), or null
 */
record NodeLife(
    String runId, boolean durable, boolean aofLoaded, long startedAtMicros, String unknown) {
  private static final int RUN_ID_LENGTH = 40;

  static NodeLife unknown(String why) {
    return new NodeLife(null, false, false, -1, why);
  }

  /** The commands whose replies {@link #of} reads, in order. */
  private static final String[][] COMMANDS = {
    {"INFO", "server"},
    {"INFO", "persistence"},
    {"INFO", "replication"},
    {"CONFIG", "GET", "appendfsync"},
    {"CONFIG", "GET", "no-appendfsync-on-rewrite"}
  };

  /**
   * Reads the life over {@code c} in one round trip. A transport failure breaks the connection
   * (thrown); a refused command is an answer.
   */
  static NodeLife read(Connection c) {
    for (String[] command : COMMANDS) {
      c.sendCommand(
          Protocol.Command.valueOf(command[0]), Arrays.copyOfRange(command, 1, command.length));
    }
    Object[] replies = new Object[COMMANDS.length];
    for (int i = 0; i < replies.length; i++) {
      try {
        replies[i] = c.getOne();
      } catch (JedisDataException e) {
        replies[i] = e; // an error reply (NOPERM, unknown command): the stream is still in step
      }
    }
    return of(replies);
  }

  /**
   * Reads the replies to {@link #COMMANDS}, each either the reply or the error it raised. INFO
   * refused by the ACL: the node cannot vote. Any other error reply (BUSY, LOADING): unknown for
   * now, and the connection is dropped so that the next one reads again. CONFIG refused by the ACL:
   * not durable.
   */
  private static NodeLife of(Object... replies) {
    for (int i = 0; i < replies.length; i++) {
      if (replies[i] instanceof RuntimeException e && !(i >= 3 && refused(e))) {
        return unknown(
            refused(e)
                ? "INFO is refused ("
                    + e.getMessage()
                    + "), so this client cannot tell whether the node restarted and does not count"
                    + " its vote; grant its user +info (and +config|get for the durability check)"
                : String.join(" ", COMMANDS[i])
                    + " failed ("
                    + e.getMessage()
                    + "): this client cannot tell yet whether the node restarted; it asks again on"
                    + " its next connection");
      }
    }
    String info = text(replies[0]);
    String runId = field(info, "run_id");
    if (runId == null || runId.length() != RUN_ID_LENGTH) {
      return unknown("INFO server has no run_id, so this client cannot tell whether it restarted");
    }
    long started = -1;
    String time = field(info, "server_time_usec");
    String uptime = field(info, "uptime_in_seconds");
    if (time != null && uptime != null) {
      // uptime is rounded down: the start we compute is at or after the real one.
      started = Long.parseLong(time) - Long.parseLong(uptime) * 1_000_000;
    }
    String aof = text(replies[1]);
    String replication = text(replies[2]);
    boolean durable =
        "1".equals(field(aof, "aof_enabled"))
            && "always".equals(configValue(replies[3]))
            && "no".equals(configValue(replies[4]));
    boolean loaded =
        durable
            && "-1".equals(field(aof, "aof_last_rewrite_time_sec"))
            && "0".equals(field(aof, "aof_rewrite_in_progress"))
            && "0".equals(field(aof, "aof_rewrite_scheduled"))
            && "master".equals(field(replication, "role"))
            && "-1".equals(field(replication, "second_repl_offset"));
    return new NodeLife(runId, durable, loaded, started, null);
  }

  private static boolean refused(RuntimeException e) {
    return String.valueOf(e.getMessage()).startsWith("NOPERM");
  }

  /** The value of a {@code CONFIG GET} reply for one parameter, or null (refused, unknown). */
  private static String configValue(Object reply) {
    return reply instanceof List<?> pair && pair.size() == 2 ? text(pair.get(1)) : null;
  }

  private static String text(Object reply) {
    return reply instanceof byte[] bytes
        ? new String(bytes, StandardCharsets.UTF_8)
        : String.valueOf(reply);
  }

  private static String field(String info, String name) {
    String prefix = "\n" + name + ":";
    int at = ("\n" + info).indexOf(prefix);
    if (at < 0) {
      return null;
    }
    int from = at + prefix.length() - 1;
    int end = info.indexOf('\r', from);
    if (end < 0) {
      end = info.indexOf('\n', from);
    }
    return (end < 0 ? info.substring(from) : info.substring(from, end)).trim();
  }

  /**
   * The acquire script's ARGV[5..8] for this process (acquire.lua), as clients of {@code keys} on
   * {@code database} send them.
   */
  List<String> scriptArgs(NodeKeys keys, int database) {
    return List.of(
        keys.identity(runId, database),
        durable ? "1" : "0",
        Long.toString(startedAtMicros),
        keys.trustDurable() && aofLoaded ? "1" : "0");
  }

  /** {@link #scriptArgs}, encoded. */
  byte[][] encodedScriptArgs(NodeKeys keys, int database) {
    return scriptArgs(keys, database).stream().map(SafeEncoder::encode).toArray(byte[][]::new);
  }

  /**
   * Whether this connection reached the process that {@code latestRunId} names (true while no
   * connection has read a run_id, or when this one could not).
   */
  boolean isOf(String latestRunId) {
    return runId == null || latestRunId == null || runId.equals(latestRunId);
  }
}
