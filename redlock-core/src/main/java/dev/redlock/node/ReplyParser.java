package dev.redlock.node;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * Reads RESP2 replies out of a buffer that a shared connection's reader fills from the socket. It
 * never blocks in parsing: {@link #next} returns {@link #INCOMPLETE} until a whole reply is
 * buffered, so a reader can wait for bytes with a short timeout, turn to other work, and come back
 * without losing its place. (Jedis's own reader blocks until a reply is whole and keeps what it
 * read ahead in a buffer the socket cannot see.) Confined to the thread that holds the reader role.
 *
 * <p>Replies: an integer is a {@link Long}, a status a {@link String}, a bulk string a {@code
 * byte[]} (or null), an array a {@link List}, an error reply a {@link JedisDataException} (a {@link
 * JedisNoScriptException} for {@code NOSCRIPT}) returned, not thrown: the stream stays in step.
 */
final class ReplyParser {
  /** What {@link #next} returns while the buffered bytes hold no whole reply. */
  static final Object INCOMPLETE = new Object();

  /**
   * What {@link #nextUnboxed} returns for an integer reply, whose value is then {@link #integer()}:
   * every reply of ours is one, and a fencing counter is too large for the boxes Java caches.
   */
  static final Object INTEGER = new Object();

  /** The largest reply accepted: ours are integers; anything near this is a broken stream. */
  private static final int MAX_REPLY = 64 * 1024 * 1024;

  private byte[] buffer = new byte[4096];
  private int start; // the first byte not parsed yet
  private int end; // one past the last byte read
  private int at; // parse position while parsing one reply
  private long integer; // the value of the last INTEGER

  /** Whether bytes have been read that are not parsed yet. */
  boolean hasBuffered() {
    return end > start;
  }

  /**
   * Reads what the socket has (at least one byte, waiting up to the socket's timeout) into the
   * buffer.
   *
   * @throws java.net.SocketTimeoutException if nothing came in time (the stream stays usable)
   * @throws IOException if the stream failed or ended
   */
  void fill(InputStream in) throws IOException {
    if (start == end) {
      start = 0;
      end = 0;
    } else if (end == buffer.length) {
      if (start > 0) {
        System.arraycopy(buffer, start, buffer, 0, end - start);
        end -= start;
        start = 0;
      } else {
        if (buffer.length >= MAX_REPLY) {
          throw new JedisConnectionException("a reply larger than " + MAX_REPLY + " bytes");
        }
        buffer = Arrays.copyOf(buffer, buffer.length * 2);
      }
    }
    int n = in.read(buffer, end, buffer.length - end);
    if (n < 0) {
      throw new EOFException("the node closed the connection");
    }
    end += n;
  }

  /**
   * The next whole reply in the buffer, consumed; {@link #INCOMPLETE} (nothing consumed) if it has
   * not all arrived.
   *
   * @throws JedisConnectionException if the bytes are not RESP2: the stream is out of step
   */
  Object next() {
    return next(false);
  }

  /**
   * {@link #next}, but an integer reply is {@link #INTEGER}, its value {@link #integer()}: no
   * {@link Long} made.
   */
  Object nextUnboxed() {
    return next(true);
  }

  /** The value of the integer reply {@link #nextUnboxed} last returned as {@link #INTEGER}. */
  long integer() {
    return integer;
  }

  private Object next(boolean unboxed) {
    at = start;
    Object reply = parse(unboxed);
    if (reply != INCOMPLETE) {
      start = at;
    }
    return reply;
  }

  /** One reply from {@link #at}; {@code unboxed}: an integer is {@link #INTEGER} (top level). */
  private Object parse(boolean unboxed) {
    if (at >= end) {
      return INCOMPLETE;
    }
    byte type = buffer[at++];
    int lineEnd = lineEnd();
    if (lineEnd < 0) {
      return INCOMPLETE;
    }
    int lineStart = at;
    at = lineEnd + 2;
    switch (type) {
      case ':':
        if (unboxed) {
          integer = number(lineStart, lineEnd);
          return INTEGER;
        }
        return number(lineStart, lineEnd);
      case '+':
        return new String(buffer, lineStart, lineEnd - lineStart, StandardCharsets.UTF_8);
      case '-':
        String message = new String(buffer, lineStart, lineEnd - lineStart, StandardCharsets.UTF_8);
        return message.startsWith("NOSCRIPT")
            ? new JedisNoScriptException(message)
            : new JedisDataException(message);
      case '$':
        {
          long length = number(lineStart, lineEnd);
          if (length < 0) {
            return null;
          }
          if (length > MAX_REPLY) {
            throw new JedisConnectionException("a bulk reply of " + length + " bytes");
          }
          if (end - at < length + 2) {
            return INCOMPLETE;
          }
          int bulkEnd = at + (int) length;
          if (buffer[bulkEnd] != '\r' || buffer[bulkEnd + 1] != '\n') {
            throw new JedisConnectionException(
                "a bulk reply without CRLF: the stream is out of step");
          }
          byte[] bulk = Arrays.copyOfRange(buffer, at, bulkEnd);
          at = bulkEnd + 2;
          return bulk;
        }
      case '*':
        {
          long count = number(lineStart, lineEnd);
          if (count < 0) {
            return null;
          }
          if (count > MAX_REPLY) {
            throw new JedisConnectionException("an array reply of " + count + " elements");
          }
          List<Object> items = new ArrayList<>((int) Math.min(count, 16));
          for (long i = 0; i < count; i++) {
            Object item = parse(false);
            if (item == INCOMPLETE) {
              return INCOMPLETE;
            }
            items.add(item);
          }
          return items;
        }
      default:
        throw new JedisConnectionException(
            "not a RESP2 reply (type byte " + (type & 0xff) + "): the stream is out of step");
    }
  }

  /** The index of the {@code \r} of the line starting at {@link #at}, or -1 if not all read. */
  private int lineEnd() {
    for (int i = at; i + 1 < end; i++) {
      if (buffer[i] == '\r') {
        if (buffer[i + 1] != '\n') {
          throw new JedisConnectionException(
              "a reply line without CRLF: the stream is out of step");
        }
        return i;
      }
    }
    return -1;
  }

  private long number(int from, int to) {
    if (from == to) {
      throw new JedisConnectionException("an empty number in a reply");
    }
    boolean negative = buffer[from] == '-';
    if (negative && to - from == 1) {
      throw new JedisConnectionException("a number without digits in a reply");
    }
    long value = 0;
    for (int i = negative ? from + 1 : from; i < to; i++) {
      int digit = buffer[i] - '0';
      if (digit < 0 || digit > 9 || value > (Long.MAX_VALUE - digit) / 10) {
        throw new JedisConnectionException("a malformed number in a reply");
      }
      value = value * 10 + digit;
    }
    return negative ? -value : value;
  }
}
