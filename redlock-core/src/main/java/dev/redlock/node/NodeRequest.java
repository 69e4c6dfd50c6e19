package dev.redlock.node;

import dev.redlock.internal.TokenHash;
import java.util.Objects;

/**
 * One request to one node, as data: the algorithm says what to ask, the node decides how to send it
 * ({@link ScriptCalls}). Replies are numbers: see {@link Verb}. A request goes to every node; each
 * connection writes its call straight into its own write buffer.
 */
public final class NodeRequest {
  private final Verb verb;
  private final String key;
  private final String token;
  private final long argument;

  /**
   * @param verb what to ask
   * @param key the lock key
   * @param token the owner token of the acquisition
   * @param argument the ttl in ms (acquire, extend) or the fencing token to reach (raise); else 0
   */
  public NodeRequest(Verb verb, String key, String token, long argument) {
    this.verb = Objects.requireNonNull(verb, "verb");
    this.key = Objects.requireNonNull(key, "key");
    this.token = Objects.requireNonNull(token, "token");
    this.argument = argument;
  }

  public Verb verb() {
    return verb;
  }

  public String key() {
    return key;
  }

  public String token() {
    return token;
  }

  public long argument() {
    return argument;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof NodeRequest r
        && verb == r.verb
        && argument == r.argument
        && key.equals(r.key)
        && token.equals(r.token);
  }

  @Override
  public int hashCode() {
    return Objects.hash(verb, key, token, argument);
  }

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
