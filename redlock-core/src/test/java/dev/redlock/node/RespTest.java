package dev.redlock.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.util.RedisOutputStream;

/** Our few RESP bytes are the bytes Jedis itself would write for the same call. */
class RespTest {
  @Test
  void aFrameIsWhatJedisWritesForTheSameArguments() throws Exception {
    String[] args = {
      "EVALSHA",
      "0123456789abcdef0123456789abcdef01234567",
      "4",
      "redlock:ledger:é",
      "",
      "9",
      "30000"
    };
    for (int cut = 0; cut <= args.length; cut++) { // a shared frame, then a connection's extras
      byte[][] bytes =
          Arrays.stream(args).map(a -> a.getBytes(StandardCharsets.UTF_8)).toArray(byte[][]::new);
      byte[] shared = Resp.bulks(Arrays.copyOfRange(bytes, 0, cut));
      byte[] out = new byte[Resp.MAX_HEADER + shared.length + 64 * args.length];
      int at = Resp.header(out, 0, args.length);
      System.arraycopy(shared, 0, out, at, shared.length);
      at += shared.length;
      for (int i = cut; i < args.length; i++) {
        at = Resp.bulk(out, at, bytes[i]);
      }
      assertArrayEquals(jedis(args), Arrays.copyOf(out, at), "cut at " + cut);
    }
  }

  private static byte[] jedis(String[] args) throws Exception {
    CommandArguments call = new CommandArguments(Protocol.Command.EVALSHA);
    for (int i = 1; i < args.length; i++) {
      call.add(args[i]);
    }
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    RedisOutputStream out = new RedisOutputStream(buffer);
    Protocol.sendCommand(out, call);
    out.flush();
    return buffer.toByteArray();
  }
}
