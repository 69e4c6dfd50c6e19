package dev.redlock.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

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
