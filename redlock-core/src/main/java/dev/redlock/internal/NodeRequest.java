package dev.redlock.internal;

/**
 * One request to one node, as data: the algorithm says what to ask, the node decides how to send
 * it. Replies are numbers: see {@link Verb}.
 *
 * @param verb what to ask
 * @param key the lock key
 * @param token the owner token of the acquisition
 * @param argument the ttl in ms (acquire, extend) or the fencing token to reach (raise); else 0
 */
public record NodeRequest(Verb verb, String key, String token, long argument) {
  /** Names the owner by its {@link TokenHash}: the token itself must never reach a log. */
  @Override
  public String toString() {
    return verb + " " + key + " owner=" + TokenHash.of(token) + " argument=" + argument;
  }

  /** What a request asks, and what its reply means. */
  public enum Verb {
    /**
     * Restart guard + SET NX PX + fencing counter: counter (> 0), 0 if held, negative if
     * quarantined.
     */
    ACQUIRE,
    /** Owner-checked raise of the fencing counter: 1, or 0 if the key is not ours. */
    RAISE_FENCE,
    /** Owner-checked PEXPIRE: 1, or 0 if the key is not ours. */
    EXTEND,
    /** Owner-checked DEL: 1, or 0 if the key is not ours. */
    RELEASE
  }
}
