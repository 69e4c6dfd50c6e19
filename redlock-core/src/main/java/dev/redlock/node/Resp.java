package dev.redlock.node;

import java.nio.charset.StandardCharsets;

/**
 * The few bits of RESP (the Redis protocol) that the library writes itself: an array header and
 * bulk strings. Requests are encoded once per request, not once per node (see {@link
 * NodeRequest#frame}); Jedis reads the replies.
 */
final class Resp {
  private Resp() {}

  /** {@code args} as consecutive bulk strings ({@code $<len>\r\n<bytes>\r\n} each). */
  static byte[] bulks(byte[]... args) {
    int size = 0;
    for (byte[] arg : args) {
      size += 1 + digits(arg.length) + 2 + arg.length + 2;
    }
    byte[] out = new byte[size];
    int at = 0;
    for (byte[] arg : args) {
      at = bulk(out, at, arg);
    }
    return out;
  }

  /** Writes one bulk string at {@code at} (room checked by the caller); returns the end. */
  static int bulk(byte[] out, int at, byte[] arg) {
    out[at++] = '$';
    at = writeInt(out, at, arg.length);
    out[at++] = '\r';
    out[at++] = '\n';
    System.arraycopy(arg, 0, out, at, arg.length);
    at += arg.length;
    out[at++] = '\r';
    out[at++] = '\n';
    return at;
  }

  static byte[] ascii(long value) {
    return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
  }

  /** Writes {@code *<count>\r\n} at {@code at}; returns the position after it. */
  static int header(byte[] out, int at, int count) {
    out[at++] = '*';
    at = writeInt(out, at, count);
    out[at++] = '\r';
    out[at++] = '\n';
    return at;
  }

  /** The most bytes {@link #header} writes. */
  static final int MAX_HEADER = 1 + 10 + 2;

  private static int digits(int value) {
    int d = 1;
    while (value >= 10) {
      value /= 10;
      d++;
    }
    return d;
  }

  private static int writeInt(byte[] out, int at, int value) {
    int end = at + digits(value);
    for (int i = end - 1; i >= at; i--) {
      out[i] = (byte) ('0' + value % 10);
      value /= 10;
    }
    return end;
  }
}
