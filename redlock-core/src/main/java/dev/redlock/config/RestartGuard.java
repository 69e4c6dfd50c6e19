package dev.redlock.config;

/**
 * What the restart guard trusts of a node whose data may lack keys it acknowledged (a restart, a
 * resync from a master, a reload, a flush, a restore): docs/fencing.md, "The restart guard". Every
 * client of a deployment must use the same policy.
 */
public enum RestartGuard {
  /**
   * The default: a node whose data this process did not stamp as its own sits out {@code maxTtl}
   * before it votes again. Always safe.
   */
  ON,

  /**
   * As {@link #ON}, but a node restarted from its own AOF, fsynced on every write, keeps its vote:
   * its process runs with {@code appendonly yes}, {@code appendfsync always} and {@code
   * no-appendfsync-on-rewrite no}, is a master that was never a replica in this life, loaded its
   * data from its AOF when it started and has since run nothing that replaces data, was stamped by
   * a process that was as durable, and a client reaches it within {@code maxTtl} of its start.
   *
   * <p>Choose it only if the nodes' persistence is never changed at runtime ({@code CONFIG SET
   * appendonly} / {@code appendfsync}: a client cannot see such a change on its open connections),
   * the nodes have no replicas (a replica restarted as a master in a node's place looks the same;
   * {@code redlock doctor} fails it), and no one restores a node's files from a backup or a disk
   * snapshot without quarantining it first ({@code redlock quarantine}): such data looks exactly
   * like the node's own.
   */
  TRUST_FSYNCED_AOF_RESTARTS,

  /**
   * No guard, as the original algorithm: a node that restarted without its data votes at once and
   * can grant a lock another client still holds. For nodes whose every restart an operator delays
   * by {@code maxTtl} (the algorithm author's advice), and for tests that show what the guard
   * prevents.
   */
  OFF
}
