package dev.redlock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Something that happened to a lock, as a {@link RedlockListener} sees it. Built only when a
 * listener is registered; the per-node account is computed only if asked for.
 */
public final class LockEvent {
  /** What happened. */
  public enum Kind {
    /** An acquisition attempt started. */
    ATTEMPT,
    /** An attempt won: a lease was granted. */
    ACQUIRED,
    /** An attempt did not win (held elsewhere, quorum unreachable, or too late). */
    FAILED,
    /** A lease was extended, by {@link Lease#extend} or by renewal. */
    EXTENDED,
    /** A lease was lost (renewal failed, validity ran out, or maxHold reached). */
    LOST,
    /** A lease was released by its holder (or by {@link Redlock#close()}). */
    RELEASED
  }

  private final Kind kind;
  private final String resource;
  private final String owner;
  private final long fencingToken;
  private final Duration validity;
  private final Duration elapsed;
  private final int votes;
  private final int quorum;
  private final String reason;
  private final Supplier<List<NodeOutcome>> nodes;
  private List<NodeOutcome> nodeOutcomes;

  LockEvent(
      Kind kind,
      String resource,
      String owner,
      long fencingToken,
      Duration validity,
      Duration elapsed,
      int votes,
      int quorum,
      String reason,
      Supplier<List<NodeOutcome>> nodes) {
    this.kind = Objects.requireNonNull(kind);
    this.resource = Objects.requireNonNull(resource);
    this.owner = owner;
    this.fencingToken = fencingToken;
    this.validity = validity;
    this.elapsed = elapsed;
    this.votes = votes;
    this.quorum = quorum;
    this.reason = reason;
    this.nodes = nodes;
  }

  public Kind kind() {
    return kind;
  }

  public String resource() {
    return resource;
  }

  /**
   * A short hash of the acquisition's owner token (8 hex characters), to tell holders apart in logs
   * and metrics; never the token itself. Empty for {@link Kind#ATTEMPT} and {@link Kind#FAILED}.
   */
  public String owner() {
    return owner == null ? "" : owner;
  }

  /** The lease's fencing token; 0 when there is no lease. */
  public long fencingToken() {
    return fencingToken;
  }

  /** Validity left when the event happened (grant, extend); zero otherwise. */
  public Duration validity() {
    return validity;
  }

  /** How long the request took, where that applies (attempt, extend); zero otherwise. */
  public Duration elapsed() {
    return elapsed;
  }

  /** How many nodes said yes. */
  public int votes() {
    return votes;
  }

  /** How many nodes had to say yes. */
  public int quorum() {
    return quorum;
  }

  /** Why, for {@link Kind#FAILED} and {@link Kind#LOST} (the reason's name); empty otherwise. */
  public String reason() {
    return reason == null ? "" : reason;
  }

  /** What each node answered, where there was a round of votes; empty otherwise. */
  public synchronized List<NodeOutcome> nodeOutcomes() {
    if (nodeOutcomes == null) {
      nodeOutcomes = nodes == null ? List.of() : List.copyOf(nodes.get());
    }
    return nodeOutcomes;
  }

  @Override
  public String toString() {
    return "LockEvent{"
        + kind
        + " '"
        + resource
        + "'"
        + (owner == null ? "" : " owner=" + owner)
        + (fencingToken == 0 ? "" : " fence=" + fencingToken)
        + " votes="
        + votes
        + "/"
        + quorum
        + (reason == null ? "" : " reason=" + reason)
        + "}";
  }
}
