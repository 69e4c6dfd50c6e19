package dev.redlock.node;

import dev.redlock.spi.LeaseRequest;
import java.io.IOException;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.args.Rawable;
import redis.clients.jedis.args.RawableFactory;
import redis.clients.jedis.util.RedisOutputStream;

/**
 * How a {@link NodeRequest} goes on the wire: the {@code EVALSHA} of its verb's script (or {@code
 * EVAL} with the source, after a {@code NOSCRIPT}) with its keys and arguments, and the acquire
 * script's per-connection arguments, as Jedis's {@link CommandArguments} for {@link
 * Protocol#sendCommand}. What every request of these keys shares is encoded once, here; what a
 * request's own, once for all the nodes it goes to ({@link #write}).
 */
final class ScriptCalls {
  private static final Rawable ONE = RawableFactory.from(1);
  private static final Rawable TWO = RawableFactory.from(2);
  private static final Rawable FOUR = RawableFactory.from(4);
  private static final Rawable SIX = RawableFactory.from(6);
  private static final NodeRequest.Verb[] VERBS = NodeRequest.Verb.values();
  private static final LeaseRequest.Shape[] SHAPES = LeaseRequest.Shape.values();
  // Per shape (one key, all keys of a multi-resource request, a read-write lock's read or write
  // side), per verb: the script.
  private static final Rawable[][] SHA1 = new Rawable[SHAPES.length][VERBS.length];
  private static final Rawable[][] SOURCE = new Rawable[SHAPES.length][VERBS.length];

  static {
    for (NodeRequest.Verb verb : VERBS) {
      for (LeaseRequest.Shape shape : SHAPES) {
        Script script = scriptOf(verb, shape);
        SHA1[shape.ordinal()][verb.ordinal()] = RawableFactory.from(script.sha1());
        SOURCE[shape.ordinal()][verb.ordinal()] = RawableFactory.from(script.source());
      }
    }
  }

  private final NodeKeys keys;
  private final Rawable maxTtlArg;
  private final Rawable guardArg;
  private final Rawable lifeKeyArg;
  private final Rawable witnessKeyArg;

  ScriptCalls(NodeKeys keys) {
    this.keys = keys;
    this.maxTtlArg = RawableFactory.from(keys.maxTtlMillisText());
    this.guardArg = RawableFactory.from(keys.guardFlag());
    this.lifeKeyArg = RawableFactory.from(keys.lifeKey());
    this.witnessKeyArg = RawableFactory.from(keys.witnessKey());
  }

  /**
   * Writes {@code r}'s call to {@code out}, {@code withSource}: as {@code EVAL} with the script's
   * source; {@code connectionArgs}: the acquire script's arguments that name the connection's
   * process (after the request's own ARGV, before a writer's intent). What a request asks of every
   * node is encoded once, by the first node that sends it, and kept on the request; a connection's
   * arguments are written after it, so that nothing is copied per node. The bytes are those of
   * Jedis's {@link Protocol#sendCommand} for the same arguments.
   */
  void write(RedisOutputStream out, NodeRequest r, boolean withSource, Rawable[] connectionArgs)
      throws IOException {
    CommandArguments own;
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
    out.writeIntCrLf(own.size() + (acquire ? connectionArgs.length : 0) + (intent ? 1 : 0));
    for (Rawable arg : own) {
      bulk(out, arg.getRaw());
    }
    if (acquire) {
      for (Rawable arg : connectionArgs) {
        bulk(out, arg.getRaw());
      }
    }
    if (intent) {
      // ARGV[9]: how long a writer's refusal keeps readers out
      bulk(out, Protocol.toByteArray(r.intentMillis()));
    }
  }

  private static void bulk(RedisOutputStream out, byte[] arg) throws IOException {
    out.write(Protocol.DOLLAR_BYTE);
    out.writeIntCrLf(arg.length);
    out.write(arg);
    out.writeCrLf();
  }

  /** A request's call but for a connection's arguments, as encoded for {@code keys}. */
  record Encoded(NodeKeys keys, CommandArguments call) {}

  /** {@code r}'s script, KEYS count, KEYS and own ARGV. */
  private CommandArguments own(NodeRequest r, boolean withSource) {
    CommandArguments call =
        new CommandArguments(withSource ? Protocol.Command.EVAL : Protocol.Command.EVALSHA)
            .add((withSource ? SOURCE : SHA1)[r.shape().ordinal()][r.verb().ordinal()]);
    if (r.isMulti()) {
      keys(r, call);
    } else if (isReadWrite(r)) {
      readWriteKeys(r, call);
    } else {
      oneKey(r, call);
    }
    call.add(r.token()).add(r.argument());
    if (r.verb() != NodeRequest.Verb.EXTEND) {
      call.add(maxTtlArg);
    }
    if (r.verb() == NodeRequest.Verb.ACQUIRE) {
      call.add(guardArg);
    }
    return call;
  }

  /**
   * KEYS of a one-key request, as the scripts read them: acquire {@code lock, life, fence,
   * witness}; raise and release {@code lock, fence}; extend {@code lock}. ARGV follow: acquire
   * {@code token, ttl, maxTtl, guard, then the connection's}; raise and release {@code token,
   * argument, maxTtl}; extend {@code token, ttl}.
   */
  private void oneKey(NodeRequest r, CommandArguments call) {
    String key = r.key();
    switch (r.verb()) {
      case ACQUIRE ->
          call.add(FOUR)
              .add(key)
              .add(lifeKeyArg)
              .add(NodeKeys.fenceKeyOfLock(key))
              .add(witnessKeyArg);
      case RAISE_FENCE, RELEASE -> call.add(TWO).add(key).add(NodeKeys.fenceKeyOfLock(key));
      case EXTEND -> call.add(ONE).add(key);
    }
  }

  /**
   * KEYS of a request of several keys, as each *_all.lua script's header describes: acquire_all.lua
   * the first key's where acquire.lua has them, then a lock key and its counter per further key;
   * raise_fence_all.lua and release_all.lua the lock keys, then their counters; extend_all.lua the
   * lock keys.
   */
  private void keys(NodeRequest r, CommandArguments call) {
    int n = r.keyCount();
    switch (r.verb()) {
      case ACQUIRE -> {
        call.add(2 + 2 * n)
            .add(r.key(0))
            .add(lifeKeyArg)
            .add(NodeKeys.fenceKeyOfLock(r.key(0)))
            .add(witnessKeyArg);
        for (int i = 1; i < n; i++) {
          call.add(r.key(i)).add(NodeKeys.fenceKeyOfLock(r.key(i)));
        }
      }
      case RAISE_FENCE, RELEASE -> {
        call.add(2 * n);
        for (int i = 0; i < n; i++) {
          call.add(r.key(i));
        }
        for (int i = 0; i < n; i++) {
          call.add(NodeKeys.fenceKeyOfLock(r.key(i)));
        }
      }
      case EXTEND -> {
        call.add(n);
        for (int i = 0; i < n; i++) {
          call.add(r.key(i));
        }
      }
    }
  }

  /**
   * KEYS of a read-write lock's request, but for a writer's extend, raise and release, which are
   * the one-key scripts' on the writer key ({@link #isReadWrite}). Both sides' acquire {@code KEYS
   * = writer key, life, fence, witness, readers, intent mark} (the first four where acquire.lua has
   * them, so its guard is the same text); a reader's raise and release {@code KEYS = readers,
   * fence}; its extend {@code KEYS = readers}. The fencing counter is the writer key's, one for
   * both sides.
   */
  private void readWriteKeys(NodeRequest r, CommandArguments call) {
    switch (r.verb()) {
      case ACQUIRE ->
          call.add(SIX)
              .add(r.key(0))
              .add(lifeKeyArg)
              .add(NodeKeys.fenceKeyOfLock(r.key(0)))
              .add(witnessKeyArg)
              .add(r.key(1))
              .add(r.key(2));
      case RAISE_FENCE, RELEASE ->
          call.add(TWO).add(r.key(1)).add(NodeKeys.fenceKeyOfLock(r.key(0)));
      case EXTEND -> call.add(ONE).add(r.key(1));
    }
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
