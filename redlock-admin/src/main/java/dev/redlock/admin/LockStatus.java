package dev.redlock.admin;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What the nodes say about one resource right now, from {@link RedlockAdmin#status(String)}: per
 * node, whether its key is held, for how long, by whom (a short hash of the owner token, never the
 * token), the fencing counter and the restart guard's quarantine; and the quorum's verdict.
 *
 * @param resource the resource asked about
 * @param quorum how many nodes make a majority
 * @param nodes one entry per configured node, in order
 */
public record LockStatus(String resource, int quorum, List<Node> nodes) {

  /** The quorum's verdict. */
  public enum Verdict {
    /** A quorum of nodes holds the key for one owner. */
    HELD,
    /**
     * A quorum of nodes that can vote (they answered and sit out no quarantine) does not hold the
     * key: an acquisition could win now.
     */
    FREE,
    /**
     * Neither: too few nodes answered or can vote, or they disagree (an owner on a minority, a
     * partial attempt, orphan keys). An acquisition would fail until keys expire, quarantines end
     * or nodes come back.
     */
    UNDECIDED
  }

  /**
   * One node's view.
   *
   * @param node the node's URI without credentials
   * @param error why the node could not be read, or null when it answered
   * @param held whether the node holds the resource's key
   * @param ttl the key's remaining time to live; zero when not held
   * @param owner an 8-hex-digit hash of the holder's token ({@code TokenHash}, as in the audit
   *     log); null when not held
   * @param fencingCounter the node's fencing counter for the resource; 0 when it has none yet
   * @param quarantine how long the restart guard keeps this node out of votes: zero when it votes;
   *     {@code maxTtl} when its life marker is missing or was stamped by another process life (the
   *     next acquisition starts the quarantine, unless it adopts a durable node's marker)
   */
  public record Node(
      String node,
      String error,
      boolean held,
      Duration ttl,
      String owner,
      long fencingCounter,
      Duration quarantine) {
    public Node {
      Objects.requireNonNull(node, "node must not be null");
      Objects.requireNonNull(ttl, "ttl must not be null");
      Objects.requireNonNull(quarantine, "quarantine must not be null");
    }

    /** Whether the node answered. */
    public boolean reachable() {
      return error == null;
    }
  }

  public LockStatus {
    Objects.requireNonNull(resource, "resource must not be null");
    nodes = List.copyOf(Objects.requireNonNull(nodes, "nodes must not be null"));
  }

  /** The verdict: see {@link Verdict}. */
  public Verdict verdict() {
    Map<String, Integer> owners = new HashMap<>();
    int free = 0;
    for (Node n : nodes) {
      if (!n.reachable()) {
        continue;
      }
      if (n.held()) {
        owners.merge(n.owner(), 1, Integer::sum);
      } else if (n.quarantine().isZero()) {
        free++; // a quarantined node votes for no one, so it cannot make the lock free
      }
    }
    if (owners.values().stream().anyMatch(count -> count >= quorum)) {
      return Verdict.HELD;
    }
    return free >= quorum ? Verdict.FREE : Verdict.UNDECIDED;
  }

  /** The owner hash a quorum agrees on, or null. */
  public String owner() {
    Map<String, Integer> owners = new HashMap<>();
    for (Node n : nodes) {
      if (n.reachable() && n.held()) {
        if (owners.merge(n.owner(), 1, Integer::sum) >= quorum) {
          return n.owner();
        }
      }
    }
    return null;
  }
}
