package dev.redlock.node;

import redis.clients.jedis.util.SafeEncoder;

/**
 * How a {@link NodeRequest} goes on the wire: the {@code EVALSHA} of its verb's script (or {@code
 * EVAL} with the source, after a {@code NOSCRIPT}) with its keys and arguments, but for the acquire
 * script's per-connection arguments, which {@link SharedConnection} adds. Written straight into a
 * connection's write buffer ({@link Resp}): the strings of a request (its key, fencing key, token,
 * argument) are never turned into byte arrays of their own, so a request costs no allocation here
 * whichever node it goes to. What every request of these keys shares is encoded once, here.
 */
final class ScriptCalls {
  private static final byte[] EVALSHA = SafeEncoder.encode("EVALSHA");
  private static final byte[] EVAL = SafeEncoder.encode("EVAL");
  private static final byte[] ONE = {'1'};
  private static final byte[] TWO = {'2'};
  private static final byte[] FOUR = {'4'};
  private static final NodeRequest.Verb[] VERBS = NodeRequest.Verb.values();
  private static final byte[][] SHA1 = new byte[VERBS.length][];
  private static final byte[][] SOURCE = new byte[VERBS.length][];

  static {
    for (NodeRequest.Verb verb : VERBS) {
      SHA1[verb.ordinal()] = SafeEncoder.encode(scriptOf(verb).sha1());
      SOURCE[verb.ordinal()] = SafeEncoder.encode(scriptOf(verb).source());
    }
  }

  private final int keyPrefixLength;
  private final byte[] fenceKeyPrefix;
  private final byte[] maxTtlArg;
  private final byte[] guardArg;
  private final byte[] lifeKeyArg;
  private final byte[] legacyEpochKeyArg;

  ScriptCalls(NodeKeys keys) {
    this.keyPrefixLength = keys.keyPrefix().length();
    this.fenceKeyPrefix = SafeEncoder.encode(keys.fenceKeyOfLock(keys.keyPrefix()));
    this.maxTtlArg = SafeEncoder.encode(keys.maxTtlMillisText());
    this.guardArg = SafeEncoder.encode(keys.guardFlag());
    this.lifeKeyArg = SafeEncoder.encode(keys.lifeKey());
    this.legacyEpochKeyArg = SafeEncoder.encode(keys.legacyEpochKey());
  }

  /** How many bulk strings {@link #write} writes for {@code r}. */
  int count(NodeRequest r) {
    return switch (r.verb()) {
      case ACQUIRE -> 11;
      case RAISE_FENCE, RELEASE -> 8;
      case EXTEND -> 6;
    };
  }

  /** How many bytes, exactly, {@link #write} writes for {@code r}. */
  int size(NodeRequest r, boolean withSource) {
    int common =
        Resp.bulkSize((withSource ? EVAL : EVALSHA).length)
            + Resp.bulkSize(body(r.verb(), withSource).length)
            + Resp.bulkSize(1) // the key count
            + Resp.bulkSize(r.key())
            + Resp.bulkSize(r.token())
            + Resp.bulkSize(r.argument());
    return switch (r.verb()) {
      case ACQUIRE ->
          common
              + Resp.bulkSize(lifeKeyArg.length)
              + fenceKeySize(r)
              + Resp.bulkSize(legacyEpochKeyArg.length)
              + Resp.bulkSize(maxTtlArg.length)
              + Resp.bulkSize(guardArg.length);
      case RAISE_FENCE, RELEASE -> common + fenceKeySize(r) + Resp.bulkSize(maxTtlArg.length);
      case EXTEND -> common;
    };
  }

  /**
   * Writes {@code r}'s call at {@code at} (room checked by the caller, see {@link #size}), but for
   * the array header and the per-connection arguments; returns the end. As the scripts read them:
   * acquire {@code KEYS = lock, life, fence, legacy epoch; ARGV = token, ttl, maxTtl, guard, then
   * the connection's}; raise and release {@code KEYS = lock, fence; ARGV = token, argument,
   * maxTtl}; extend {@code KEYS = lock; ARGV = token, ttl}.
   */
  int write(NodeRequest r, boolean withSource, byte[] out, int at) {
    at = Resp.bulk(out, at, withSource ? EVAL : EVALSHA);
    at = Resp.bulk(out, at, body(r.verb(), withSource));
    switch (r.verb()) {
      case ACQUIRE -> {
        at = Resp.bulk(out, at, FOUR);
        at = Resp.bulk(out, at, r.key());
        at = Resp.bulk(out, at, lifeKeyArg);
        at = fenceKey(out, at, r);
        at = Resp.bulk(out, at, legacyEpochKeyArg);
        at = Resp.bulk(out, at, r.token());
        at = Resp.bulk(out, at, r.argument());
        at = Resp.bulk(out, at, maxTtlArg);
        at = Resp.bulk(out, at, guardArg);
      }
      case RAISE_FENCE, RELEASE -> {
        at = Resp.bulk(out, at, TWO);
        at = Resp.bulk(out, at, r.key());
        at = fenceKey(out, at, r);
        at = Resp.bulk(out, at, r.token());
        at = Resp.bulk(out, at, r.argument());
        at = Resp.bulk(out, at, maxTtlArg);
      }
      case EXTEND -> {
        at = Resp.bulk(out, at, ONE);
        at = Resp.bulk(out, at, r.key());
        at = Resp.bulk(out, at, r.token());
        at = Resp.bulk(out, at, r.argument());
      }
    }
    return at;
  }

  /** The fencing counter's key, {@link NodeKeys#fenceKeyOfLock}, written without making it. */
  private int fenceKey(byte[] out, int at, NodeRequest r) {
    return Resp.bulk(out, at, fenceKeyPrefix, r.key(), keyPrefixLength);
  }

  private int fenceKeySize(NodeRequest r) {
    return Resp.bulkSize(fenceKeyPrefix, r.key(), keyPrefixLength);
  }

  private static byte[] body(NodeRequest.Verb verb, boolean withSource) {
    return (withSource ? SOURCE : SHA1)[verb.ordinal()];
  }

  private static Script scriptOf(NodeRequest.Verb verb) {
    return switch (verb) {
      case ACQUIRE -> Script.ACQUIRE;
      case RAISE_FENCE -> Script.RAISE_FENCE;
      case EXTEND -> Script.EXTEND;
      case RELEASE -> Script.RELEASE;
    };
  }
}
