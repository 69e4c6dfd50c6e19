package dev.redlock;

import java.util.List;
import java.util.Objects;

/**
 * The lock could not be acquired: it is held elsewhere, or a quorum of nodes could not be reached
 * in time. The message and {@link #nodeOutcomes()} say what each node answered in the last attempt.
 *
 * <p>{@link #reason()} separates "busy" from "broken": {@link Reason#HELD_ELSEWHERE} is normal
 * contention; the other reasons mean the nodes, the network or the client are in trouble.
 */
public class LockUnavailableException extends RedlockException {
  private static final long serialVersionUID = 1L;

  /** Why the last attempt did not win. */
  public enum Reason {
    /** Enough nodes answered, but too many of them hold the key for another owner. */
    HELD_ELSEWHERE,
    /** Too many nodes failed or did not answer within {@code nodeTimeout} to form a quorum. */
    QUORUM_UNREACHABLE,
    /** A quorum said yes, but too late: no validity was left after elapsed time and drift. */
    VALIDITY_EXPIRED
  }

  private final String resource;
  private final Reason reason;
  private final int attempts;
  private final transient List<NodeOutcome> nodeOutcomes;

  /**
   * Creates the exception.
   *
   * @param message the full, human-readable account
   * @param resource the resource that could not be locked
   * @param reason why the last attempt did not win
   * @param attempts how many attempts were made
   * @param nodeOutcomes what each node answered in the last attempt
   */
  public LockUnavailableException(
      String message,
      String resource,
      Reason reason,
      int attempts,
      List<NodeOutcome> nodeOutcomes) {
    super(message);
    this.resource = Objects.requireNonNull(resource, "resource must not be null");
    this.reason = Objects.requireNonNull(reason, "reason must not be null");
    this.attempts = attempts;
    this.nodeOutcomes =
        List.copyOf(Objects.requireNonNull(nodeOutcomes, "nodeOutcomes must not be null"));
  }

  /** The resource that could not be locked. */
  public String resource() {
    return resource;
  }

  /** Why the last attempt did not win. */
  public Reason reason() {
    return reason;
  }

  /** How many attempts were made before giving up (1 for {@code tryAcquire}). */
  public int attempts() {
    return attempts;
  }

  /** What each node answered in the last attempt, in the order the nodes were configured. */
  public List<NodeOutcome> nodeOutcomes() {
    return nodeOutcomes;
  }
}
