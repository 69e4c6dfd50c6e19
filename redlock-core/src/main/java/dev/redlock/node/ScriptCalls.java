package dev.redlock.node;

import dev.redlock.spi.LeaseRequest;
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
  private static final byte[] SIX = {'6'};
  private static final NodeRequest.Verb[] VERBS = NodeRequest.Verb.values();
  private static final LeaseRequest.Shape[] SHAPES = LeaseRequest.Shape.values();
  // Per shape (one key, all keys of a multi-resource request, a read-write lock's read or write
  // side), per verb: the script.
  private static final byte[][][] SHA1 = new byte[SHAPES.length][VERBS.length][];
  private static final byte[][][] SOURCE = new byte[SHAPES.length][VERBS.length][];

  static {
    for (NodeRequest.Verb verb : VERBS) {
      for (LeaseRequest.Shape shape : SHAPES) {
        Script script = scriptOf(verb, shape);
        SHA1[shape.ordinal()][verb.ordinal()] = SafeEncoder.encode(script.sha1());
        SOURCE[shape.ordinal()][verb.ordinal()] = SafeEncoder.encode(script.source());
      }
    }
  }

  private static final byte[] FENCE_SUFFIX = NodeKeys.fenceSuffix();
  private final byte[] maxTtlArg;
  private final byte[] guardArg;
  private final byte[] lifeKeyArg;
  private final byte[] witnessKeyArg;

  ScriptCalls(NodeKeys keys) {
    this.maxTtlArg = SafeEncoder.encode(keys.maxTtlMillisText());
    this.guardArg = SafeEncoder.encode(keys.guardFlag());
    this.lifeKeyArg = SafeEncoder.encode(keys.lifeKey());
    this.witnessKeyArg = SafeEncoder.encode(keys.witnessKey());
  }

  /** How many bulk strings {@link #write} writes for {@code r}. */
  int count(NodeRequest r) {
    return 3 + keyCount(r) + argCount(r.verb()) + (hasTail(r) ? 1 : 0);
  }

  /**
   * Whether {@code r} has an ARGV after the per-connection ones, written by {@link #writeTail}: a
   * writer's acquire of a read-write lock (ARGV[9], how long its refusal keeps readers out).
   */
  private static boolean hasTail(NodeRequest r) {
    return r.shape() == LeaseRequest.Shape.WRITE && r.verb() == NodeRequest.Verb.ACQUIRE;
  }

  /**
   * Writes what comes after the per-connection arguments (see {@link #hasTail}); returns the end.
   * {@link #count} and {@link #size} include it.
   */
  int writeTail(NodeRequest r, byte[] out, int at) {
    return hasTail(r) ? Resp.bulk(out, at, r.intentMillis()) : at;
  }

  /**
   * The script's KEYS count: one key as acquire.lua, raise_fence.lua, release.lua and extend.lua
   * read them; several as their *_all.lua versions do (see {@link #write}).
   */
  private static int keyCount(NodeRequest r) {
    if (isReadWrite(r)) {
      return switch (r.verb()) {
        case ACQUIRE -> 6;
        case RAISE_FENCE, RELEASE -> 2;
        case EXTEND -> 1;
      };
    }
    int n = r.keyCount();
    return switch (r.verb()) {
      case ACQUIRE -> 2 + 2 * n;
      case RAISE_FENCE, RELEASE -> 2 * n;
      case EXTEND -> n;
    };
  }

  /** The script's ARGV count, but for the acquire script's per-connection ones. */
  private static int argCount(NodeRequest.Verb verb) {
    return switch (verb) {
      case ACQUIRE -> 4;
      case RAISE_FENCE, RELEASE -> 3;
      case EXTEND -> 2;
    };
  }

  /** How many bytes, exactly, {@link #write} writes for {@code r}. */
  int size(NodeRequest r, boolean withSource) {
    if (isReadWrite(r)) {
      return readWriteSize(r, withSource) + (hasTail(r) ? Resp.bulkSize(r.intentMillis()) : 0);
    }
    int n = r.keyCount();
    int size =
        Resp.bulkSize((withSource ? EVAL : EVALSHA).length)
            + Resp.bulkSize(body(r, withSource).length)
            + Resp.bulkSize((long) keyCount(r))
            + Resp.bulkSize(r.token())
            + Resp.bulkSize(r.argument());
    for (int i = 0; i < n; i++) {
      size += Resp.bulkSize(r.key(i));
      if (r.verb() != NodeRequest.Verb.EXTEND) {
        size += fenceKeySize(r.key(i));
      }
    }
    return switch (r.verb()) {
      case ACQUIRE ->
          size
              + Resp.bulkSize(lifeKeyArg.length)
              + Resp.bulkSize(witnessKeyArg.length)
              + Resp.bulkSize(maxTtlArg.length)
              + Resp.bulkSize(guardArg.length);
      case RAISE_FENCE, RELEASE -> size + Resp.bulkSize(maxTtlArg.length);
      case EXTEND -> size;
    };
  }

  /**
   * Writes {@code r}'s call at {@code at} (room checked by the caller, see {@link #size}), but for
   * the array header and the per-connection arguments; returns the end. As the scripts read them:
   * acquire {@code KEYS = lock, life, fence, witness; ARGV = token, ttl, maxTtl, guard, then the
   * connection's}; raise and release {@code KEYS = lock, fence; ARGV = token, argument, maxTtl};
   * extend {@code KEYS = lock; ARGV = token, ttl}. A request of several keys has the same ARGV, and
   * KEYS as each *_all.lua script's header describes: acquire_all.lua the first key's where
   * acquire.lua has them, then a lock key and its counter per further key; raise_fence_all.lua and
   * release_all.lua the lock keys, then their counters; extend_all.lua the lock keys.
   */
  int write(NodeRequest r, boolean withSource, byte[] out, int at) {
    at = Resp.bulk(out, at, withSource ? EVAL : EVALSHA);
    at = Resp.bulk(out, at, body(r, withSource));
    if (r.isMulti()) {
      return writeKeys(r, out, at);
    }
    if (isReadWrite(r)) {
      return writeReadWrite(r, out, at);
    }
    switch (r.verb()) {
      case ACQUIRE -> {
        at = Resp.bulk(out, at, FOUR);
        at = Resp.bulk(out, at, r.key());
        at = Resp.bulk(out, at, lifeKeyArg);
        at = fenceKey(out, at, r.key());
        at = Resp.bulk(out, at, witnessKeyArg);
      }
      case RAISE_FENCE, RELEASE -> {
        at = Resp.bulk(out, at, TWO);
        at = Resp.bulk(out, at, r.key());
        at = fenceKey(out, at, r.key());
      }
      case EXTEND -> {
        at = Resp.bulk(out, at, ONE);
        at = Resp.bulk(out, at, r.key());
      }
    }
    return arguments(r, out, at);
  }

  /** {@link #write} for a request of several keys, after the script: its KEYS, then its ARGV. */
  private int writeKeys(NodeRequest r, byte[] out, int at) {
    int n = r.keyCount();
    at = Resp.bulk(out, at, (long) keyCount(r));
    switch (r.verb()) {
      case ACQUIRE -> {
        at = Resp.bulk(out, at, r.key(0));
        at = Resp.bulk(out, at, lifeKeyArg);
        at = fenceKey(out, at, r.key(0));
        at = Resp.bulk(out, at, witnessKeyArg);
        for (int i = 1; i < n; i++) {
          at = Resp.bulk(out, at, r.key(i));
          at = fenceKey(out, at, r.key(i));
        }
      }
      case RAISE_FENCE, RELEASE -> {
        for (int i = 0; i < n; i++) {
          at = Resp.bulk(out, at, r.key(i));
        }
        for (int i = 0; i < n; i++) {
          at = fenceKey(out, at, r.key(i));
        }
      }
      case EXTEND -> {
        for (int i = 0; i < n; i++) {
          at = Resp.bulk(out, at, r.key(i));
        }
      }
    }
    return arguments(r, out, at);
  }

  /**
   * A read-write lock's request, but for a writer's extend, raise and release, which are the
   * one-key scripts' on the writer key ({@link #isReadWrite}). Both sides' acquire {@code KEYS =
   * writer key, life, fence, witness, readers, intent mark} (the first four where acquire.lua has
   * them, so its guard is the same text); a reader's raise and release {@code KEYS = readers,
   * fence}; its extend {@code KEYS = readers}. The fencing counter is the writer key's, one for
   * both sides. ARGV as the one-key scripts.
   */
  private int writeReadWrite(NodeRequest r, byte[] out, int at) {
    switch (r.verb()) {
      case ACQUIRE -> {
        at = Resp.bulk(out, at, SIX);
        at = Resp.bulk(out, at, r.key(0));
        at = Resp.bulk(out, at, lifeKeyArg);
        at = fenceKey(out, at, r.key(0));
        at = Resp.bulk(out, at, witnessKeyArg);
        at = Resp.bulk(out, at, r.key(1));
        at = Resp.bulk(out, at, r.key(2));
      }
      case RAISE_FENCE, RELEASE -> {
        at = Resp.bulk(out, at, TWO);
        at = Resp.bulk(out, at, r.key(1));
        at = fenceKey(out, at, r.key(0));
      }
      case EXTEND -> {
        at = Resp.bulk(out, at, ONE);
        at = Resp.bulk(out, at, r.key(1));
      }
    }
    return arguments(r, out, at);
  }

  /** {@link #size} of what {@link #writeReadWrite} writes. */
  private int readWriteSize(NodeRequest r, boolean withSource) {
    int size =
        Resp.bulkSize((withSource ? EVAL : EVALSHA).length)
            + Resp.bulkSize(body(r, withSource).length)
            + Resp.bulkSize((long) keyCount(r))
            + Resp.bulkSize(r.token())
            + Resp.bulkSize(r.argument());
    return switch (r.verb()) {
      case ACQUIRE ->
          size
              + Resp.bulkSize(r.key(0))
              + Resp.bulkSize(lifeKeyArg.length)
              + fenceKeySize(r.key(0))
              + Resp.bulkSize(witnessKeyArg.length)
              + Resp.bulkSize(r.key(1))
              + Resp.bulkSize(r.key(2))
              + Resp.bulkSize(maxTtlArg.length)
              + Resp.bulkSize(guardArg.length);
      case RAISE_FENCE, RELEASE ->
          size + Resp.bulkSize(r.key(1)) + fenceKeySize(r.key(0)) + Resp.bulkSize(maxTtlArg.length);
      case EXTEND -> size + Resp.bulkSize(r.key(1));
    };
  }

  /**
   * Whether {@code r} needs a read-write layout of its own: every request of a reader, and a
   * writer's acquire; a writer's other requests are the one-key scripts' on its writer key.
   */
  private static boolean isReadWrite(NodeRequest r) {
    return r.shape() == LeaseRequest.Shape.READ
        || (r.shape() == LeaseRequest.Shape.WRITE && r.verb() == NodeRequest.Verb.ACQUIRE);
  }

  /** The ARGV every request of {@code r}'s verb has, one key or several. */
  private int arguments(NodeRequest r, byte[] out, int at) {
    at = Resp.bulk(out, at, r.token());
    at = Resp.bulk(out, at, r.argument());
    if (r.verb() != NodeRequest.Verb.EXTEND) {
      at = Resp.bulk(out, at, maxTtlArg);
    }
    if (r.verb() == NodeRequest.Verb.ACQUIRE) {
      at = Resp.bulk(out, at, guardArg); // then the connection's process, by SharedConnection
    }
    return at;
  }

  /** The fencing counter's key, {@link NodeKeys#fenceKeyOfLock}, written without making it. */
  private static int fenceKey(byte[] out, int at, String lockKey) {
    return Resp.bulk(out, at, lockKey, FENCE_SUFFIX);
  }

  private static int fenceKeySize(String lockKey) {
    return Resp.bulkSize(lockKey, FENCE_SUFFIX);
  }

  private static byte[] body(NodeRequest r, boolean withSource) {
    return (withSource ? SOURCE : SHA1)[r.shape().ordinal()][r.verb().ordinal()];
  }

  /** The script {@code verb} runs for a lease of {@code shape}. */
  static Script scriptOf(NodeRequest.Verb verb, LeaseRequest.Shape shape) {
    return switch (shape) {
      case ONE, WRITE ->
          switch (verb) {
            case ACQUIRE ->
                shape == LeaseRequest.Shape.WRITE ? Script.WRITE_ACQUIRE : Script.ACQUIRE;
            case RAISE_FENCE -> Script.RAISE_FENCE;
            case EXTEND -> Script.EXTEND;
            case RELEASE -> Script.RELEASE;
          };
      case ALL ->
          switch (verb) {
            case ACQUIRE -> Script.ACQUIRE_ALL;
            case RAISE_FENCE -> Script.RAISE_FENCE_ALL;
            case EXTEND -> Script.EXTEND_ALL;
            case RELEASE -> Script.RELEASE_ALL;
          };
      case READ ->
          switch (verb) {
            case ACQUIRE -> Script.READ_ACQUIRE;
            case RAISE_FENCE -> Script.READ_RAISE_FENCE;
            case EXTEND -> Script.READ_EXTEND;
            case RELEASE -> Script.READ_RELEASE;
          };
    };
  }
}
