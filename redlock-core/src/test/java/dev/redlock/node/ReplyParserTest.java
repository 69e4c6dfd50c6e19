package dev.redlock.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/** The reply parser alone, on bytes (the real-node suites run it against redis-server). */
class ReplyParserTest {
  private static InputStream bytes(String s) {
    return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
  }

  /** Feeds {@code text} one byte per read, the worst a socket can do. */
  private static InputStream trickle(String text) {
    byte[] all = text.getBytes(StandardCharsets.UTF_8);
    return new InputStream() {
      int at;

      @Override
      public int read() {
        return at < all.length ? all[at++] : -1;
      }

      @Override
      public int read(byte[] b, int off, int len) {
        if (at >= all.length) {
          return -1;
        }
        b[off] = all[at++];
        return 1;
      }
    };
  }

  @Test
  void readsEveryKindOfReplyInOrder() throws IOException {
    ReplyParser parser = new ReplyParser();
    parser.fill(
        bytes(
            ":1\r\n:-42\r\n+OK\r\n-ERR wrong\r\n-NOSCRIPT No matching script\r\n$3\r\nabc\r\n"
                + "$-1\r\n*2\r\n:7\r\n$0\r\n\r\n*-1\r\n"));
    assertEquals(1L, parser.next());
    assertEquals(-42L, parser.next());
    assertEquals("OK", parser.next());
    JedisDataException error = assertInstanceOf(JedisDataException.class, parser.next());
    assertEquals("ERR wrong", error.getMessage());
    assertInstanceOf(JedisNoScriptException.class, parser.next());
    assertArrayEquals("abc".getBytes(StandardCharsets.UTF_8), (byte[]) parser.next());
    assertNull(parser.next());
    List<?> array = (List<?>) parser.next();
    assertEquals(7L, array.get(0));
    assertArrayEquals(new byte[0], (byte[]) array.get(1));
    assertNull(parser.next());
    assertSame(ReplyParser.INCOMPLETE, parser.next());
    assertTrue(!parser.hasBuffered());
  }

  /** Unboxed, an integer reply is INTEGER with its value beside it; the rest are as next() says. */
  @Test
  void readsIntegersUnboxed() throws IOException {
    ReplyParser parser = new ReplyParser();
    parser.fill(bytes(":9007199254740993\r\n:-1\r\n+OK\r\n*1\r\n:7\r\n:1"));
    assertSame(ReplyParser.INTEGER, parser.nextUnboxed());
    assertEquals(9007199254740993L, parser.integer());
    assertSame(ReplyParser.INTEGER, parser.nextUnboxed());
    assertEquals(-1L, parser.integer());
    assertEquals("OK", parser.nextUnboxed());
    assertEquals(List.of(7L), parser.nextUnboxed()); // inside an array integers stay boxed
    assertSame(ReplyParser.INCOMPLETE, parser.nextUnboxed()); // ":1" without its CRLF
    assertEquals(-1L, parser.integer()); // set by neither the array's integer nor a partial one
  }

  /** A reply split anywhere (a byte per read) is returned only once whole, and nothing is lost. */
  @Test
  void aReplySplitAnywhereIsReturnedOnceWhole() throws IOException {
    String stream = ":12345\r\n$5\r\nhello\r\n*2\r\n:1\r\n-BUSY x\r\n:0\r\n";
    InputStream in = trickle(stream);
    ReplyParser parser = new ReplyParser();
    List<Object> replies = new java.util.ArrayList<>();
    int reads = 0;
    while (replies.size() < 4) {
      Object reply = parser.next();
      if (reply == ReplyParser.INCOMPLETE) {
        parser.fill(in);
        reads++;
      } else {
        replies.add(reply);
      }
    }
    assertEquals(stream.length(), reads);
    assertEquals(12345L, replies.get(0));
    assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), (byte[]) replies.get(1));
    assertEquals(2, ((List<?>) replies.get(2)).size());
    assertInstanceOf(JedisDataException.class, ((List<?>) replies.get(2)).get(1));
    assertEquals(0L, replies.get(3));
  }

  /** A buffer that must grow (a large bulk) keeps what it had. */
  @Test
  void aLargeReplyGrowsTheBuffer() throws IOException {
    String big = "x".repeat(20_000);
    ReplyParser parser = new ReplyParser();
    InputStream in = bytes(":1\r\n$" + big.length() + "\r\n" + big + "\r\n:2\r\n");
    List<Object> replies = new java.util.ArrayList<>();
    while (replies.size() < 3) {
      Object reply = parser.next();
      if (reply == ReplyParser.INCOMPLETE) {
        parser.fill(in);
      } else {
        replies.add(reply);
      }
    }
    assertEquals(1L, replies.get(0));
    assertEquals(big, new String((byte[]) replies.get(1), StandardCharsets.UTF_8));
    assertEquals(2L, replies.get(2));
  }

  @Test
  void bytesThatAreNotRespBreakTheStreamLoudly() throws IOException {
    for (String bad :
        new String[] {"%1\r\n", ":12a\r\n", ":\r\n", ":-\r\n", ":1\rX", "$2\r\nabXY"}) {
      ReplyParser parser = new ReplyParser();
      parser.fill(bytes(bad));
      assertThrows(JedisConnectionException.class, parser::next, bad);
    }
  }

  @Test
  void theEndOfTheStreamIsAnError() {
    ReplyParser parser = new ReplyParser();
    assertThrows(EOFException.class, () -> parser.fill(bytes("")));
  }
}
