package dev.redlock.admin;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What the nodes say about one read-write lock right now, from {@link
 * RedlockAdmin#readWriteStatus(String)}: per node, its writer (a short hash of the owner token,
 * never the token) and for how long, its live readers (hashes too) and the longest time one has
 * left, a waiting writer's intent mark, the lock's one fencing counter and the restart guard's
 * quarantine; and the quorum's verdict.
 *
 * @param name the read-write lock's name, as given to {@link dev.redlock.Redlock#readWriteLock}
 * @param quorum how many nodes make a majority
 * @param nodes one entry per configured node, in order
 */
public record ReadWriteStatus(String name, int quorum, List<Node> nodes) {

  /** The quorum's verdict. */
  public enum Verdict {
    /** A quorum of nodes holds the writer key for one owner: a write lease is valid. */
    WRITE_HELD,
    /**
     * A quorum of nodes has live readers (not necessarily the same ones): a writer cannot be
     * granted now. {@link #readers()} are the read leases a quorum holds, which may be none: the
     * readers of different nodes may each be on a minority (valid nowhere, yet blocking).
     */
    READ_HELD,
    /**
     * A quorum of nodes that can vote (they answered and sit out no quarantine) has neither a
     * writer nor a live reader: a writer could win now (a reader too, unless a writer's intent mark
     * keeps it out: {@link #writerWaiting()}).
     */
    FREE,
    /**
     * None of these: too few nodes answered, or they disagree (a writer on a minority, a partial
     * attempt). An acquisition would fail until entries expire or nodes come back.
     */
    UNDECIDED
  }

  /**
   * One node's view.
   *
   * @param node the node's URI without credentials
   * @param error why the node could not be read, or null when it answered
   * @param writerHeld whether the node holds the lock's writer key
   * @param writerTtl the writer key's remaining time to live; zero when not held
   * @param writer an 8-hex-digit hash of the writer's token ({@code TokenHash}, as in the audit
   *     log); null when not held
   * @param readers the hashes of the node's live readers (entries whose expiry is after the node's
   *     clock, read in the same pipeline), sorted; expired entries, which no lease counts on, are
   *     left out
   * @param longestReaderTtl how long the live reader with the most time left has; zero when there
   *     is none
   * @param intentTtl how long a waiting writer's intent mark keeps new readers out here; zero when
   *     there is none
   * @param fencingCounter the node's fencing counter for the lock (one for both sides); 0 when it
   *     has none yet
   * @param quarantine how long the restart guard keeps this node out of votes, as in {@link
   *     LockStatus.Node#quarantine()}
   */
  public record Node(
      String node,
      String error,
      boolean writerHeld,
      Duration writerTtl,
      String writer,
      List<String> readers,
      Duration longestReaderTtl,
      Duration intentTtl,
      long fencingCounter,
      Duration quarantine) {
    public Node {
      Objects.requireNonNull(node, "node must not be null");
      Objects.requireNonNull(writerTtl, "writerTtl must not be null");
      readers = List.copyOf(Objects.requireNonNull(readers, "readers must not be null"));
      Objects.requireNonNull(longestReaderTtl, "longestReaderTtl must not be null");
      Objects.requireNonNull(intentTtl, "intentTtl must not be null");
      Objects.requireNonNull(quarantine, "quarantine must not be null");
    }

    /** Whether the node answered. */
    public boolean reachable() {
      return error == null;
    }

    /** How many live readers the node has. */
    public int readerCount() {
      return readers.size();
    }

    /** Whether a waiting writer's intent mark is on the node. */
    public boolean intentMarked() {
      return !intentTtl.isZero();
    }
  }

  public ReadWriteStatus {
    Objects.requireNonNull(name, "name must not be null");
    nodes = List.copyOf(Objects.requireNonNull(nodes, "nodes must not be null"));
  }

  /** The verdict: see {@link Verdict}; a writer on a quorum comes first. */
  public Verdict verdict() {
    if (writer() != null) {
      return Verdict.WRITE_HELD;
    }
    int reading = 0;
    int free = 0;
    for (Node n : nodes) {
      if (!n.reachable()) {
        continue;
      }
      if (n.readerCount() > 0) {
        reading++;
      } else if (!n.writerHeld() && n.quarantine().isZero()) {
        free++; // a quarantined node votes for no one, so it cannot make the lock free
      }
    }
    if (reading >= quorum) {
      return Verdict.READ_HELD;
    }
    return free >= quorum ? Verdict.FREE : Verdict.UNDECIDED;
  }

  /** The writer hash a quorum agrees on, or null. */
  public String writer() {
    Map<String, Integer> writers = new HashMap<>();
    for (Node n : nodes) {
      if (n.reachable() && n.writerHeld()) {
        if (writers.merge(n.writer(), 1, Integer::sum) >= quorum) {
          return n.writer();
        }
      }
    }
    return null;
  }

  /**
   * The hashes of the readers a quorum of nodes holds live, sorted: the read leases that count.
   * Others may be on a minority (an attempt under way, or one being rolled back).
   */
  public List<String> readers() {
    Map<String, Integer> readers = new HashMap<>();
    for (Node n : nodes) {
      if (n.reachable()) {
        n.readers().forEach(r -> readers.merge(r, 1, Integer::sum));
      }
    }
    return readers.entrySet().stream()
        .filter(e -> e.getValue() >= quorum)
        .map(Map.Entry::getKey)
        .sorted()
        .toList();
  }

  /**
   * Whether a quorum of nodes carries a waiting writer's intent mark: new readers are refused until
   * it expires or the writer is granted.
   */
  public boolean writerWaiting() {
    return nodes.stream().filter(n -> n.reachable() && n.intentMarked()).count() >= quorum;
  }
}
