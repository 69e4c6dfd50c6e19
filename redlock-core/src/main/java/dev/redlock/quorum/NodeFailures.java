package dev.redlock.quorum;

import dev.redlock.NodeOutcome;
import dev.redlock.node.NodeLifeUnknownException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import redis.clients.jedis.exceptions.JedisAccessControlException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * Turns what a node threw, or a quarantine, into a status and one short phrase a person on call can
 * act on.
 */
final class NodeFailures {
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss");

  private NodeFailures() {}

  static NodeOutcome.Status status(Throwable error) {
    return find(error, SocketTimeoutException.class) != null
        ? NodeOutcome.Status.TIMED_OUT
        : NodeOutcome.Status.FAILED;
  }

  static String describe(Throwable error) {
    if (error instanceof NodeLifeUnknownException) {
      return error.getMessage();
    }
    if (find(error, SocketTimeoutException.class) != null) {
      return "timed out: " + error.getMessage();
    }
    if (find(error, ConnectException.class) != null) {
      return "connection refused: " + find(error, ConnectException.class).getMessage();
    }
    if (find(error, UnknownHostException.class) != null) {
      return "unknown host: " + find(error, UnknownHostException.class).getMessage();
    }
    if (find(error, JedisAccessControlException.class) != null) {
      return "authentication failed: "
          + find(error, JedisAccessControlException.class).getMessage();
    }
    JedisDataException reply = find(error, JedisDataException.class);
    if (reply != null) {
      String text = String.valueOf(reply.getMessage());
      return (text.startsWith("WRONGPASS") || text.startsWith("NOAUTH")
              ? "authentication failed: "
              : "error reply: ")
          + text;
    }
    if (error instanceof java.util.concurrent.RejectedExecutionException) {
      return error.getMessage();
    }
    return error.toString();
  }

  /**
   * Finds {@code type} in the cause chain, or among suppressed errors (Jedis puts connect failures
   * there).
   */
  private static <T extends Throwable> T find(Throwable error, Class<T> type) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
      for (Throwable s : t.getSuppressed()) {
        if (type.isInstance(s)) {
          return type.cast(s);
        }
      }
    }
    return null;
  }

  /** A quarantined node's account: for how long, and until when on this machine's clock. */
  static String quarantined(long millisLeft) {
    return "data not trusted yet (new, restarted, resynced, reloaded, flushed or restored): no vote"
        + " for another "
        + millisLeft
        + " ms, until "
        + LocalTime.now().plus(Duration.ofMillis(millisLeft)).format(CLOCK);
  }
}
