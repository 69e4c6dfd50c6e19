package dev.redlock.node;

import dev.redlock.internal.TokenHash;
import dev.redlock.spi.LeaseRequest.Shape;
import java.util.Objects;

/**
 * One request to every node, as data: the algorithm says what to ask, the node how to send it
 * ({@link ScriptCalls}); replies are numbers ({@link Verb}). It is about one lock key, several at
 * once ({@link #ofKeys}: one script over every key, all or nothing per node), or a read-write
 * lock's three keys ({@link #ofReadWrite}); {@link #key()}, the first, picks the connection.
 */
public final class NodeRequest {
  private final Verb verb;
  private final String key;
  private final String[] keys; // null for a request about one key
  private final Shape shape;
  private final long intentMillis; // a waiting writer's acquire: how long to keep readers out
  private final String token;
  private final long argument;

  /** Its arguments as encoded for one {@link NodeKeys}, kept for the other nodes it goes to. */
  volatile ScriptCalls.Encoded encoded;

  /** {@code argument}: the ttl in ms (acquire, extend), the fence to reach (raise), else 0. */
  public NodeRequest(Verb verb, String key, String token, long argument) {
    this(verb, Objects.requireNonNull(key, "key"), null, Shape.ONE, token, argument, 0);
  }

  private NodeRequest(
      Verb verb,
      String key,
      String[] keys,
      Shape shape,
      String token,
      long argument,
      long intentMillis) {
    this.verb = Objects.requireNonNull(verb, "verb");
    this.key = key;
    this.keys = keys;
    this.shape = shape;
    this.intentMillis = intentMillis;
    this.token = Objects.requireNonNull(token, "token");
    this.argument = argument;
  }

  /** The request of {@code shape}: one key, {@link #ofKeys} or {@link #ofReadWrite}. */
  public static NodeRequest of(
      Verb verb,
      Shape shape,
      String key,
      String[] keys,
      String token,
      long argument,
      long intentMillis) {
    return switch (shape) {
      case ONE -> new NodeRequest(verb, key, token, argument);
      case ALL -> ofKeys(verb, keys, token, argument);
      case READ, WRITE -> ofReadWrite(verb, shape, keys, token, argument, intentMillis);
    };
  }

  /**
   * A request about every one of {@code keys} at once (two or more, distinct, sorted by the
   * caller). The array is shared by every request of one lease, not copied: it must not change.
   */
  public static NodeRequest ofKeys(Verb verb, String[] keys, String token, long argument) {
    if (keys.length < 2) {
      throw new IllegalArgumentException("a request of several keys needs 2 or more, was 1");
    }
    return new NodeRequest(verb, keys[0], keys, Shape.ALL, token, argument, 0);
  }

  /**
   * A request of one side ({@link Shape#READ} or {@link Shape#WRITE}) of the read-write lock whose
   * {@code keys} are {@link NodeKeys#readWriteKeys}; the array is shared, not copied. {@code
   * intentMillis}: for a writer's acquire, how long a refusal keeps new readers out (the writer
   * will ask again within it; 0 for a writer that will not); else 0.
   */
  public static NodeRequest ofReadWrite(
      Verb verb, Shape shape, String[] keys, String token, long argument, long intentMillis) {
    if ((shape != Shape.READ && shape != Shape.WRITE) || keys.length != 3) {
      throw new IllegalArgumentException(
          "a read-write request needs shape READ or WRITE and 3 keys, was "
              + shape
              + " with "
              + keys.length);
    }
    return new NodeRequest(verb, keys[0], keys, shape, token, argument, intentMillis);
  }

  public long intentMillis() {
    return intentMillis;
  }

  /** Whether this request is about several keys at once ({@link #ofKeys}). */
  public boolean isMulti() {
    return shape == Shape.ALL;
  }

  public Shape shape() {
    return shape;
  }

  /** How many locks this request is about: several for {@link #ofKeys}, else one. */
  public int keyCount() {
    return shape == Shape.ALL ? keys.length : 1;
  }

  /** The {@code i}-th key (0 is {@link #key()}); of a read-write request, as given. */
  public String key(int i) {
    return keys == null ? key : keys[i];
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
        && shape == r.shape
        && argument == r.argument
        && intentMillis == r.intentMillis
        && key.equals(r.key)
        && java.util.Arrays.equals(keys, r.keys)
        && token.equals(r.token);
  }

  @Override
  public int hashCode() {
    return Objects.hash(verb, key, token, argument) * 31 + java.util.Arrays.hashCode(keys);
  }

  /** Names the owner by its {@link TokenHash}: the token itself must never reach a log. */
  @Override
  public String toString() {
    return verb
        + (shape == Shape.READ || shape == Shape.WRITE ? " " + shape : "")
        + " "
        + (keys == null ? key : java.util.Arrays.toString(keys))
        + " owner="
        + TokenHash.of(token)
        + " argument="
        + argument;
  }

  /** What a request asks, and what its reply means. */
  public enum Verb {
    /**
     * Restart guard + SET NX PX + fencing counter: the token (> 0), 0 if held, negative if
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
