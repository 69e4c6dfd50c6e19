package dev.redlock.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.util.RedisOutputStream;

/**
 * Our few RESP bytes are the bytes Jedis itself would write for the same call: each request's call
 * as {@link ScriptCalls} writes it into a connection's buffer (with a connection's acquire
 * arguments after it), and each bulk string writer for any string or number.
 */
class RespTest {
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
            int extraSize = 0;
            for (byte[] arg : extra) {
              extraSize += Resp.bulkSize(arg.length);
            }
            byte[] out = new byte[Resp.MAX_HEADER + calls.size(r, withSource) + extraSize];
            int at = Resp.header(out, 0, calls.count(r) + extra.length);
            at = calls.write(r, withSource, out, at);
            for (byte[] arg : extra) {
              at = Resp.bulk(out, at, arg);
            }
            String what = verb + " '" + resource + "' " + argument + " source=" + withSource;
            assertArrayEquals(jedis(expected(r, withSource), extra), Arrays.copyOf(out, at), what);
            int header = Resp.header(new byte[Resp.MAX_HEADER], 0, calls.count(r) + extra.length);
            assertEquals(header + calls.size(r, withSource) + extraSize, at, "exact size: " + what);
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
    int extraSize = 0;
    for (byte[] arg : extra) {
      extraSize += Resp.bulkSize(arg.length);
    }
    byte[] out = new byte[Resp.MAX_HEADER + calls.size(r, withSource) + extraSize];
    int at = Resp.header(out, 0, calls.count(r) + extra.length);
    at = calls.write(r, withSource, out, at);
    for (byte[] arg : extra) {
      at = Resp.bulk(out, at, arg);
    }
    String what = r.verb() + " " + r.keyCount() + " keys from '" + r.key() + "' " + r.argument();
    what += " source=" + withSource;
    assertArrayEquals(jedis(expectedOfKeys(r, withSource), extra), Arrays.copyOf(out, at), what);
    int header = Resp.header(new byte[Resp.MAX_HEADER], 0, calls.count(r) + extra.length);
    assertEquals(header + calls.size(r, withSource) + extraSize, at, "exact size: " + what);
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

  @Test
  void stringsAreUtf8AsStringGetBytesEncodesThem() {
    Random random = new Random(15);
    List<String> texts = new ArrayList<>(Arrays.asList(RESOURCES));
    for (int i = 0; i < 2000; i++) {
      char[] chars = new char[random.nextInt(12)];
      for (int c = 0; c < chars.length; c++) {
        chars[c] =
            switch (random.nextInt(4)) {
              case 0 -> (char) random.nextInt(0x80);
              case 1 -> (char) (0xd800 + random.nextInt(0x800)); // surrogates, paired or not
              default -> (char) random.nextInt(0x10000);
            };
      }
      texts.add(new String(chars));
    }
    for (String text : texts) {
      byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
      assertEquals(utf8.length, Resp.utf8Length(text, 0), text);
      byte[] out = new byte[Resp.bulkSize(text)];
      assertEquals(out.length, Resp.bulk(out, 0, text), text);
      byte[] expected = new byte[out.length];
      assertEquals(out.length, Resp.bulk(expected, 0, utf8));
      assertArrayEquals(expected, out, text);
    }
  }

  @Test
  void numbersAreTheirDecimalDigits() {
    for (long value :
        new long[] {0, 1, 9, 10, 99, 100, -1, -10, 30_000, Long.MAX_VALUE, Long.MIN_VALUE + 1}) {
      assertNumber(value);
    }
    assertNumber(Long.MIN_VALUE);
    Random random = new Random(15);
    for (int i = 0; i < 1000; i++) {
      assertNumber(random.nextLong() >> random.nextInt(64));
    }
  }

  private static void assertNumber(long value) {
    byte[] out = new byte[Resp.bulkSize(value)];
    assertEquals(out.length, Resp.bulk(out, 0, value));
    byte[] expected = new byte[out.length];
    Resp.bulk(expected, 0, Long.toString(value).getBytes(StandardCharsets.US_ASCII));
    assertArrayEquals(expected, out, Long.toString(value));
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
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    RedisOutputStream out = new RedisOutputStream(buffer);
    Protocol.sendCommand(out, call);
    out.flush();
    return buffer.toByteArray();
  }
}
