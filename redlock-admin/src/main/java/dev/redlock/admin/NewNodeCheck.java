package dev.redlock.admin;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What {@link RedlockAdmin#checkNewNode(int)} found on one node, or what {@link
 * RedlockAdmin#vouchForNewNode(int, String, String)} did there: whether the node holds nothing of
 * the lock's key prefix, so that an operator who knows it never served a lock may let it vote
 * without the restart guard's quarantine.
 *
 * @param node the node's URI without credentials
 * @param verdict what was found
 * @param runId the {@code run_id} of the process that answered
 * @param uptime how long that process has been up
 * @param keysInDatabase how many keys the node's database holds, of any prefix ({@code DBSIZE})
 * @param keysLoadedAtStart how many keys the process loaded from its data files when it started
 *     ({@code rdb_last_load_keys_loaded}); -1 when the node does not say (Redis 6.2)
 * @param markerBefore the life marker {@code {prefix}@life} before the call, or null when there was
 *     none
 * @param markerWritten the life marker stamped, or null when nothing was written
 * @param keys keys of the prefix found on the node (the first 10), which make it {@link
 *     Verdict#NOT_NEW}; empty otherwise
 */
public record NewNodeCheck(
    String node,
    Verdict verdict,
    String runId,
    Duration uptime,
    long keysInDatabase,
    long keysLoadedAtStart,
    String markerBefore,
    String markerWritten,
    List<String> keys) {

  /** What the check found on the node. */
  public enum Verdict {
    /**
     * Nothing of the key prefix but, at most, a life marker this process life stamped (a client's
     * first acquisition stamps one and is refused): nothing it could have forgotten. {@link
     * RedlockAdmin#vouchForNewNode} stamps it trusted.
     */
    NEW,
    /**
     * Its life marker is from this process life and older than {@code maxTtl}: it votes already.
     */
    VOTES,
    /**
     * It holds keys of the prefix (lock keys, fencing counters, the previous version's keys), or a
     * life marker another process life left: it served locks, and may be a node restarted from old
     * data. Never vouched for.
     */
    NOT_NEW,
    /** The process is not the one whose {@code run_id} was given: it restarted. Nothing written. */
    RESTARTED,
    /**
     * The node holds more keys than {@link RedlockAdmin#MAX_KEYS_TO_CHECK}: checking them all in
     * one step would stall it. Not checked, nothing written; it votes once its quarantine ends.
     */
    TOO_MANY_KEYS
  }

  /**
   * Creates a check's result.
   *
   * @throws NullPointerException if {@code node}, {@code verdict}, {@code runId}, {@code uptime} or
   *     {@code keys} is null
   */
  public NewNodeCheck {
    Objects.requireNonNull(node, "node must not be null");
    Objects.requireNonNull(verdict, "verdict must not be null");
    Objects.requireNonNull(runId, "runId must not be null");
    Objects.requireNonNull(uptime, "uptime must not be null");
    keys = List.copyOf(Objects.requireNonNull(keys, "keys must not be null"));
  }

  /** Whether this call stamped the node trusted: it votes from now on. */
  public boolean vouched() {
    return markerWritten != null;
  }
}
