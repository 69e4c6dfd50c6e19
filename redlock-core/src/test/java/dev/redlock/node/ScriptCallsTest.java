package dev.redlock.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import dev.redlock.script.Script;
import dev.redlock.spi.LeaseRequest;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.util.RedisOutputStream;

/**
 * Each request's call as {@link ScriptCalls} lays it out (with a connection's acquire arguments
 * after it) is the call the scripts read: compared, as the bytes Jedis writes, with the call built
 * here argument by argument.
 */
class ScriptCallsTest {
  private static final NodeKeys KEYS = NodeKeys.of("redlock:", 60_000, true);
  private static final byte[][] CONNECTION_ARGS = {
    "run".getBytes(StandardCharsets.UTF_8), {'1'}, "1700000000000000".getBytes(), {'0'}
  };

  /** Resources with ASCII, 2-, 3- and 4-byte UTF-8 characters, and unpaired surrogates. */
  private static final String[] RESOURCES = {
    "ledger:2026-11-29", "é", "ledger:€", "emoji:\uD83D\uDE00!", "lone:\uD800x", "tail:\uDC00", ""
  };

  @Test
  void everyRequestIsWrittenAsJedisWritesTheSameCall() throws Exception {
    ScriptCalls calls = new ScriptCalls(KEYS);
    for (String resource : RESOURCES) {
      for (NodeRequest.Verb verb : NodeRequest.Verb.values()) {
        for (long argument : new long[] {0, 7, 30_000, Long.MAX_VALUE, -1, Long.MIN_VALUE}) {
          for (boolean withSource : new boolean[] {false, true}) {
            NodeRequest r =
                new NodeRequest(verb, "redlock:" + resource, "0123456789abcdef", argument);
            byte[][] extra = verb == NodeRequest.Verb.ACQUIRE ? CONNECTION_ARGS : new byte[0][];
            String what = verb + " '" + resource + "' " + argument + " source=" + withSource;
            assertArrayEquals(
                jedis(expected(r, withSource), extra), written(calls, r, withSource), what);
          }
        }
      }
    }
  }

  /**
   * A request of several keys (a multi-resource lease) as its *_all.lua script reads it, laid out
   * here as each script's header describes: for 2 and 3 keys, of every kind of character.
   */
  @Test
  void everyRequestOfSeveralKeysIsWrittenAsJedisWritesTheSameCall() throws Exception {
    ScriptCalls calls = new ScriptCalls(KEYS);
    for (int n = 2; n <= 3; n++) {
      for (int first = 0; first < RESOURCES.length; first++) {
        String[] keys = new String[n];
        for (int i = 0; i < n; i++) {
          keys[i] = "redlock:" + RESOURCES[(first + i) % RESOURCES.length] + "#" + i;
        }
        for (NodeRequest.Verb verb : NodeRequest.Verb.values()) {
          for (long argument : new long[] {0, 30_000, Long.MAX_VALUE, Long.MIN_VALUE}) {
            for (boolean withSource : new boolean[] {false, true}) {
              NodeRequest r = NodeRequest.ofKeys(verb, keys, "0123456789abcdef", argument);
              assertWrittenAsJedis(calls, r, withSource);
            }
          }
        }
      }
    }
  }

  /**
   * Both sides of a read-write lock as their scripts read them: both acquires {@code KEYS = writer
   * key, life, fence, witness, readers, intent mark} (a writer's with its intent last); a reader's
   * raise, release and extend on the readers key; a writer's other requests the one-key scripts'.
   */
  @Test
  void everyReadWriteRequestIsWrittenAsJedisWritesTheSameCall() throws Exception {
    ScriptCalls calls = new ScriptCalls(KEYS);
    for (String resource : RESOURCES) {
      String[] keys = {"redlock:" + resource, "redlock:" + resource + ":r", "redlock:" + resource};
      keys[2] += ":w";
      for (LeaseRequest.Shape shape :
          new LeaseRequest.Shape[] {LeaseRequest.Shape.READ, LeaseRequest.Shape.WRITE}) {
        for (NodeRequest.Verb verb : NodeRequest.Verb.values()) {
          for (long intent : new long[] {0, 1_500}) {
            for (boolean withSource : new boolean[] {false, true}) {
              long i =
                  shape == LeaseRequest.Shape.WRITE && verb == NodeRequest.Verb.ACQUIRE
                      ? intent
                      : 0;
              NodeRequest r =
                  NodeRequest.ofReadWrite(verb, shape, keys, "0123456789abcdef", 30_000, i);
              byte[][] extra = verb == NodeRequest.Verb.ACQUIRE ? CONNECTION_ARGS : new byte[0][];
              if (i != 0
                  || (shape == LeaseRequest.Shape.WRITE && verb == NodeRequest.Verb.ACQUIRE)) {
                extra = java.util.Arrays.copyOf(extra, extra.length + 1);
                extra[extra.length - 1] = Long.toString(i).getBytes(StandardCharsets.UTF_8);
              }
              assertArrayEquals(
                  jedis(expectedReadWrite(r, withSource), extra),
                  written(calls, r, withSource),
                  shape + " " + verb + " '" + resource + "' intent=" + i + " source=" + withSource);
            }
          }
        }
      }
    }
  }

  /** A read-write request's call as ScriptCalls's javadoc lays it out, each argument a string. */
  private static String[] expectedReadWrite(NodeRequest r, boolean withSource) {
    boolean write = r.shape() == LeaseRequest.Shape.WRITE;
    if (write && r.verb() != NodeRequest.Verb.ACQUIRE) {
      return expected(new NodeRequest(r.verb(), r.key(0), r.token(), r.argument()), withSource);
    }
    Script script = ScriptCalls.scriptOf(r.verb(), r.shape());
    List<String> args = new ArrayList<>();
    args.add(withSource ? "EVAL" : "EVALSHA");
    args.add(withSource ? script.source() : script.sha1());
    String fence = NodeKeys.fenceKeyOfLock(r.key(0));
    switch (r.verb()) {
      case ACQUIRE ->
          args.addAll(
              List.of("6", r.key(0), KEYS.lifeKey(), fence, KEYS.witnessKey(), r.key(1), r.key(2)));
      case RAISE_FENCE, RELEASE -> args.addAll(List.of("2", r.key(1), fence));
      case EXTEND -> args.addAll(List.of("1", r.key(1)));
    }
    return withArgv(args, r);
  }

  private static void assertWrittenAsJedis(ScriptCalls calls, NodeRequest r, boolean withSource)
      throws Exception {
    byte[][] extra = r.verb() == NodeRequest.Verb.ACQUIRE ? CONNECTION_ARGS : new byte[0][];
    String what = r.verb() + " " + r.keyCount() + " keys from '" + r.key() + "' " + r.argument();
    what += " source=" + withSource;
    assertArrayEquals(
        jedis(expectedOfKeys(r, withSource), extra), written(calls, r, withSource), what);
  }

  /** The call of several keys as it was built before it was written in place (JedisNode's). */
  private static String[] expectedOfKeys(NodeRequest r, boolean withSource) {
    Script script =
        switch (r.verb()) {
          case ACQUIRE -> Script.ACQUIRE_ALL;
          case RAISE_FENCE -> Script.RAISE_FENCE_ALL;
          case EXTEND -> Script.EXTEND_ALL;
          case RELEASE -> Script.RELEASE_ALL;
        };
    int n = r.keyCount();
    List<String> args = new ArrayList<>();
    args.add(withSource ? "EVAL" : "EVALSHA");
    args.add(withSource ? script.source() : script.sha1());
    switch (r.verb()) {
      case ACQUIRE -> {
        args.add(Integer.toString(2 + 2 * n));
        args.add(r.key(0));
        args.add(KEYS.lifeKey());
        args.add(NodeKeys.fenceKeyOfLock(r.key(0)));
        args.add(KEYS.witnessKey());
        for (int i = 1; i < n; i++) {
          args.add(r.key(i));
          args.add(NodeKeys.fenceKeyOfLock(r.key(i)));
        }
      }
      case RAISE_FENCE, RELEASE -> {
        args.add(Integer.toString(2 * n));
        for (int i = 0; i < n; i++) {
          args.add(r.key(i));
        }
        for (int i = 0; i < n; i++) {
          args.add(NodeKeys.fenceKeyOfLock(r.key(i)));
        }
      }
      case EXTEND -> {
        args.add(Integer.toString(n));
        for (int i = 0; i < n; i++) {
          args.add(r.key(i));
        }
      }
    }
    return withArgv(args, r);
  }

  /** {@code args} (the script and its KEYS), then the ARGV every shape ends with. */
  private static String[] withArgv(List<String> args, NodeRequest r) {
    args.add(r.token());
    args.add(Long.toString(r.argument()));
    if (r.verb() != NodeRequest.Verb.EXTEND) {
      args.add(KEYS.maxTtlMillisText());
    }
    if (r.verb() == NodeRequest.Verb.ACQUIRE) {
      args.add(KEYS.guardFlag());
    }
    return args.toArray(new String[0]);
  }

  /** The call as it was built before it was written in place: each argument a string. */
  private static String[] expected(NodeRequest r, boolean withSource) {
    Script script =
        switch (r.verb()) {
          case ACQUIRE -> Script.ACQUIRE;
          case RAISE_FENCE -> Script.RAISE_FENCE;
          case EXTEND -> Script.EXTEND;
          case RELEASE -> Script.RELEASE;
        };
    String call = withSource ? "EVAL" : "EVALSHA";
    String body = withSource ? script.source() : script.sha1();
    String fence = NodeKeys.fenceKeyOfLock(r.key());
    String argument = Long.toString(r.argument());
    String maxTtl = KEYS.maxTtlMillisText();
    return switch (r.verb()) {
      case ACQUIRE ->
          new String[] {
            call,
            body,
            "4",
            r.key(),
            KEYS.lifeKey(),
            fence,
            KEYS.witnessKey(),
            r.token(),
            argument,
            maxTtl,
            KEYS.guardFlag()
          };
      case RAISE_FENCE, RELEASE ->
          new String[] {call, body, "2", r.key(), fence, r.token(), argument, maxTtl};
      case EXTEND -> new String[] {call, body, "1", r.key(), r.token(), argument};
    };
  }

  private static byte[] jedis(String[] args, byte[][] extra) throws Exception {
    CommandArguments call =
        new CommandArguments(
            args[0].equals("EVAL") ? Protocol.Command.EVAL : Protocol.Command.EVALSHA);
    for (int i = 1; i < args.length; i++) {
      call.add(args[i]);
    }
    for (byte[] arg : extra) {
      call.add(arg);
    }
    return written(call);
  }

  private static byte[] written(ScriptCalls calls, NodeRequest r, boolean withSource)
      throws Exception {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    RedisOutputStream out = new RedisOutputStream(buffer);
    calls.write(out, r, withSource, CONNECTION_ARGS);
    out.flush();
    return buffer.toByteArray();
  }

  private static byte[] written(CommandArguments call) throws Exception {
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    RedisOutputStream out = new RedisOutputStream(buffer);
    Protocol.sendCommand(out, call);
    out.flush();
    return buffer.toByteArray();
  }
}
