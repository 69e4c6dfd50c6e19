package dev.redlock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A lease ended while its holder still wanted it: a renewal failed, its validity ran out, or it
 * reached the longest hold allowed ({@code maxHold}). From the moment this is signalled, another
 * client may hold the lock: stop acting on the protected resource.
 *
 * <p>Thrown by {@link Lease#checkValid()} and handed to {@link Lease#onLost} callbacks.
 */
public class LeaseLostException extends RedlockException {
  private static final long serialVersionUID = 1L;

  /** Why a lease was lost. */
  public enum Reason {
    /** A renewal reached no quorum in time: the nodes no longer (provably) hold the lease. */
    RENEWAL_FAILED,
    /** The validity ran out without a successful renewal (none asked for, or none back in time). */
    EXPIRED,
    /** Renewal stopped by policy: the lease was held for {@code maxHold}. */
    MAX_HOLD_REACHED
  }

  private final String resource;
  private final Reason reason;
  private final transient List<NodeOutcome> nodeOutcomes;

  /**
   * Creates the exception.
   *
   * @param message what happened, naming the resource and the nodes that failed
   * @param resource the resource whose lease was lost
   * @param reason why
   * @param nodeOutcomes what each node answered to the failed renewal; empty for other reasons
   */
  public LeaseLostException(
      String message, String resource, Reason reason, List<NodeOutcome> nodeOutcomes) {
    super(message);
    this.resource = Objects.requireNonNull(resource, "resource must not be null");
    this.reason = Objects.requireNonNull(reason, "reason must not be null");
    this.nodeOutcomes =
        List.copyOf(Objects.requireNonNull(nodeOutcomes, "nodeOutcomes must not be null"));
  }

  /** The resource whose lease was lost. */
  public String resource() {
    return resource;
  }

  /** Why the lease was lost. */
  public Reason reason() {
    return reason;
  }

  /**
   * What each node answered to the renewal that failed; empty unless {@link Reason#RENEWAL_FAILED}.
   */
  public List<NodeOutcome> nodeOutcomes() {
    return nodeOutcomes;
  }

  /** The loss of {@code resource}'s lease, with the message that says why. */
  static LeaseLostException of(
      String resource,
      Reason reason,
      List<NodeOutcome> outcomes,
      int quorum,
      Duration maxHold,
      boolean closed) {
    String lease = "lease on '" + resource + "' lost";
    String why =
        switch (reason) {
          case RENEWAL_FAILED ->
              ": renewal did not reach a quorum of " + quorum + " in time; nodes: " + outcomes;
          case EXPIRED ->
              ": its validity ran out without a successful renewal"
                  + (closed ? " (renewal stopped when the Redlock closed)" : "");
          case MAX_HOLD_REACHED ->
              " by policy: held for maxHold (" + maxHold + "); renewal stopped";
        };
    return new LeaseLostException(lease + why, resource, reason, outcomes);
  }
}
