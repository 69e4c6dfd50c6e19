package dev.redlock;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;

/**
 * What one node answered to one request of an attempt: an entry of the per-node account that
 * failures carry and that logs print.
 *
 * @param node the node, as its URI without credentials ({@code redis://127.0.0.1:7001})
 * @param status what came of the request
 * @param detail a short human-readable explanation ("held by another owner", "connection refused",
 *     ...); never a token
 * @param latency how long the node took to answer; {@link Duration#ZERO} when it did not answer
 */
public record NodeOutcome(String node, Status status, String detail, Duration latency) {

  /** What came of one request to one node. */
  public enum Status {
    /** The node did what was asked: took the key, extended it, or deleted it. */
    OK,
    /** The node answered but refused: the key is held by another owner, or is not ours. */
    REFUSED,
    /** The node answered with an error, or the connection to it failed. */
    FAILED,
    /** The node did not answer within {@code nodeTimeout}. */
    TIMED_OUT,
    /** The outcome was decided before this node answered, so its reply was not awaited. */
    PENDING,
    /** The request was not sent: the node is known not to hold the key. */
    SKIPPED,
    /**
     * The node's data is younger than {@code maxTtl} (it restarted without persistence, or was
     * flushed): it may have forgotten a lock, so it does not vote, and took no key.
     */
    QUARANTINED
  }

  /**
   * Creates an outcome.
   *
   * @throws NullPointerException if any argument is null
   */
  public NodeOutcome {
    Objects.requireNonNull(node, "node must not be null");
    Objects.requireNonNull(status, "status must not be null");
    Objects.requireNonNull(detail, "detail must not be null");
    Objects.requireNonNull(latency, "latency must not be null");
  }

  /** One line for a log: {@code redis://127.0.0.1:7001 REFUSED (held by another owner) 0.4ms}. */
  @Override
  public String toString() {
    StringBuilder line = new StringBuilder(node).append(' ').append(status);
    if (!detail.isEmpty()) {
      line.append(" (").append(detail).append(')');
    }
    if (!latency.isZero()) {
      line.append(' ').append(String.format(Locale.ROOT, "%.1fms", latency.toNanos() / 1e6));
    }
    return line.toString();
  }
}
