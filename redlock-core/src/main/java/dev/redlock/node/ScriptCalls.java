package dev.redlock.node;

import dev.redlock.script.Script;
import dev.redlock.spi.LeaseRequest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.util.RedisOutputStream;

/**
 * How a {@link NodeRequest} goes on the wire: the {@code EVALSHA} of its verb's script (or {@code
 * EVAL} with the source, after a {@code NOSCRIPT}) with its keys and arguments, and the acquire
 * script's per-connection arguments, written as Jedis's {@link Protocol#sendCommand} writes a call.
 * What every request of these keys shares is encoded once, here; what a request's own, once for all
 * the nodes it goes to ({@link #write}).
 */
final class ScriptCalls {
  private static final byte[] EVALSHA = Protocol.Command.EVALSHA.getRaw();
  private static final byte[] EVAL = Protocol.Command.EVAL.getRaw();
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
        SHA1[shape.ordinal()][verb.ordinal()] = bytes(script.sha1());
        SOURCE[shape.ordinal()][verb.ordinal()] = bytes(script.source());
      }
    }
  }

  private final NodeKeys keys;
  private final byte[] maxTtlArg;
  private final byte[] guardArg;
  private final byte[] lifeKeyArg;
  private final byte[] witnessKeyArg;

  ScriptCalls(NodeKeys keys) {
    this.keys = keys;
    this.maxTtlArg = bytes(keys.maxTtlMillisText());
    this.guardArg = bytes(keys.guardFlag());
    this.lifeKeyArg = bytes(keys.lifeKey());
    this.witnessKeyArg = bytes(keys.witnessKey());
  }

  /**
   * Writes {@code r}'s call to {@code out}: {@code withSource} as {@code EVAL}; an acquire's {@code
   * connectionArgs} (naming the connection's process) after its own ARGV, before a writer's intent,
   * so that what the request asks of every node is encoded once and nothing is copied per node.
   */
  void write(RedisOutputStream out, NodeRequest r, boolean withSource, byte[][] connectionArgs)
      throws IOException {
    byte[][] own;
    if (withSource) {
      own = own(r, true); // after a NOSCRIPT only
    } else {
      Encoded e = r.encoded;
      if (e == null || e.keys() != keys) {
        e = new Encoded(keys, own(r, false));
        r.encoded = e;
      }
      own = e.call();
    }
    boolean acquire = r.verb() == NodeRequest.Verb.ACQUIRE;
    boolean intent = acquire && r.shape() == LeaseRequest.Shape.WRITE;
    out.write(Protocol.ASTERISK_BYTE);
    out.writeIntCrLf(own.length + (acquire ? connectionArgs.length : 0) + (intent ? 1 : 0));
    for (byte[] arg : own) {
      bulk(out, arg);
    }
    if (acquire) {
      for (byte[] arg : connectionArgs) {
        bulk(out, arg);
      }
    }
    if (intent) {
      bulk(out, Protocol.toByteArray(r.intentMillis())); // ARGV[9]
    }
  }

  private static void bulk(RedisOutputStream out, byte[] arg) throws IOException {
    out.write(Protocol.DOLLAR_BYTE);
    out.writeIntCrLf(arg.length);
    out.write(arg);
    out.writeCrLf();
  }

  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** A request's call but for a connection's arguments, as encoded for {@code keys}. */
  record Encoded(NodeKeys keys, byte[][] call) {}

  /** {@code r}'s command, script, KEYS count, KEYS and own ARGV. */
  private byte[][] own(NodeRequest r, boolean withSource) {
    boolean acquire = r.verb() == NodeRequest.Verb.ACQUIRE;
    int keyCount = keyCount(r);
    int argv = 2 + (r.verb() != NodeRequest.Verb.EXTEND ? 1 : 0) + (acquire ? 1 : 0);
    byte[][] call = new byte[3 + keyCount + argv][];
    call[0] = withSource ? EVAL : EVALSHA;
    call[1] = (withSource ? SOURCE : SHA1)[r.shape().ordinal()][r.verb().ordinal()];
    call[2] = Protocol.toByteArray(keyCount);
    int at = 3;
    if (r.isMulti()) {
      at = keys(r, call, at);
    } else if (isReadWrite(r)) {
      at = readWriteKeys(r, call, at);
    } else {
      at = oneKey(r, call, at);
    }
    call[at++] = bytes(r.token());
    call[at++] = Protocol.toByteArray(r.argument());
    if (r.verb() != NodeRequest.Verb.EXTEND) {
      call[at++] = maxTtlArg;
    }
    if (acquire) {
      call[at] = guardArg;
    }
    return call;
  }

  /** How many KEYS {@code r}'s script reads (the layouts below). */
  private static int keyCount(NodeRequest r) {
    if (r.isMulti()) {
      int n = r.keyCount();
      return switch (r.verb()) {
        case ACQUIRE -> 2 + 2 * n;
        case RAISE_FENCE, RELEASE -> 2 * n;
        case EXTEND -> n;
      };
    }
    return switch (r.verb()) {
      case ACQUIRE -> isReadWrite(r) ? 6 : 4;
      case RAISE_FENCE, RELEASE -> 2;
      case EXTEND -> 1;
    };
  }

  /**
   * KEYS of a one-key request, as the scripts read them: acquire {@code lock, life, fence,
   * witness}; raise and release {@code lock, fence}; extend {@code lock}. ARGV follow: acquire
   * {@code token, ttl, maxTtl, guard, then the connection's}; raise and release {@code token,
   * argument, maxTtl}; extend {@code token, ttl}.
   */
  private int oneKey(NodeRequest r, byte[][] call, int at) {
    String key = r.key();
    switch (r.verb()) {
      case ACQUIRE -> at = acquireKeys(key, call, at);
      case RAISE_FENCE, RELEASE -> {
        call[at++] = bytes(key);
        call[at++] = bytes(NodeKeys.fenceKeyOfLock(key));
      }
      case EXTEND -> call[at++] = bytes(key);
    }
    return at;
  }

  /** The first KEYS of every acquire script, where acquire.lua has them. */
  private int acquireKeys(String key, byte[][] call, int at) {
    call[at++] = bytes(key);
    call[at++] = lifeKeyArg;
    call[at++] = bytes(NodeKeys.fenceKeyOfLock(key));
    call[at++] = witnessKeyArg;
    return at;
  }

  /**
   * KEYS of a request of several keys, as each *_all.lua script's header describes: acquire_all.lua
   * the first key's where acquire.lua has them, then a lock key and its counter per further key;
   * raise_fence_all.lua and release_all.lua the lock keys, then their counters; extend_all.lua the
   * lock keys.
   */
  private int keys(NodeRequest r, byte[][] call, int at) {
    int n = r.keyCount();
    switch (r.verb()) {
      case ACQUIRE -> {
        at = acquireKeys(r.key(0), call, at);
        for (int i = 1; i < n; i++) {
          call[at++] = bytes(r.key(i));
          call[at++] = bytes(NodeKeys.fenceKeyOfLock(r.key(i)));
        }
      }
      case RAISE_FENCE, RELEASE -> {
        for (int i = 0; i < n; i++) {
          call[at++] = bytes(r.key(i));
        }
        for (int i = 0; i < n; i++) {
          call[at++] = bytes(NodeKeys.fenceKeyOfLock(r.key(i)));
        }
      }
      case EXTEND -> {
        for (int i = 0; i < n; i++) {
          call[at++] = bytes(r.key(i));
        }
      }
    }
    return at;
  }

  /**
   * KEYS of a read-write lock's request, but for a writer's extend, raise and release, which are
   * the one-key scripts' on the writer key ({@link #isReadWrite}). Both sides' acquire {@code KEYS
   * = writer key, life, fence, witness, readers, intent mark} (the first four where acquire.lua has
   * them, so its guard is the same text); a reader's raise and release {@code KEYS = readers,
   * fence}; its extend {@code KEYS = readers}. The fencing counter is the writer key's, one for
   * both sides.
   */
  private int readWriteKeys(NodeRequest r, byte[][] call, int at) {
    switch (r.verb()) {
      case ACQUIRE -> {
        at = acquireKeys(r.key(0), call, at);
        call[at++] = bytes(r.key(1));
        call[at++] = bytes(r.key(2));
      }
      case RAISE_FENCE, RELEASE -> {
        call[at++] = bytes(r.key(1));
        call[at++] = bytes(NodeKeys.fenceKeyOfLock(r.key(0)));
      }
      case EXTEND -> call[at++] = bytes(r.key(1));
    }
    return at;
  }

  /**
   * Whether {@code r} needs a read-write layout of its own: every request of a reader, and a
   * writer's acquire; a writer's other requests are the one-key scripts' on its writer key.
   */
  private static boolean isReadWrite(NodeRequest r) {
    return r.shape() == LeaseRequest.Shape.READ
        || (r.shape() == LeaseRequest.Shape.WRITE && r.verb() == NodeRequest.Verb.ACQUIRE);
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
