package dev.redlock.node;

import java.nio.charset.StandardCharsets;

/**
 * The few bits of RESP (the Redis protocol) that the library writes itself: an array header and
 * bulk strings, written straight into a connection's write buffer: a string is encoded as UTF-8
 * there, a number as its decimal digits, with no intermediate byte array (a request's call is
 * written on every node's connection, and nothing of it is allocated per request). Each writer has
 * a size method that tells, exactly, how many bytes it writes.
 */
final class Resp {
  private Resp() {}

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

  /** The bytes {@link #bulk(byte[], int, byte[])} writes for an argument of {@code length}. */
  static int bulkSize(int length) {
    return 1 + digits(length) + 2 + length + 2;
  }

  private static final byte[] NONE = {};

  /** {@code text} as one bulk string, UTF-8 as {@link String#getBytes} encodes it. */
  static int bulk(byte[] out, int at, String text) {
    return bulk(out, at, text, NONE);
  }

  /** The bytes {@link #bulk(byte[], int, String)} writes. */
  static int bulkSize(String text) {
    return bulkSize(utf8Length(text, 0));
  }

  /**
   * One bulk string made of {@code head} and then {@code tail}, without making the joined string: a
   * fencing counter's name is its lock key and a suffix.
   */
  static int bulk(byte[] out, int at, String head, byte[] tail) {
    out[at++] = '$';
    at = writeInt(out, at, utf8Length(head, 0) + tail.length);
    out[at++] = '\r';
    out[at++] = '\n';
    at = writeUtf8(out, at, head, 0);
    System.arraycopy(tail, 0, out, at, tail.length);
    at += tail.length;
    out[at++] = '\r';
    out[at++] = '\n';
    return at;
  }

  /** The bytes {@link #bulk(byte[], int, String, byte[])} writes. */
  static int bulkSize(String head, byte[] tail) {
    return bulkSize(utf8Length(head, 0) + tail.length);
  }

  /** {@code value} in decimal, as one bulk string (as {@link Long#toString} writes it). */
  static int bulk(byte[] out, int at, long value) {
    int length = decimalLength(value);
    out[at++] = '$';
    at = writeInt(out, at, length);
    out[at++] = '\r';
    out[at++] = '\n';
    if (value == Long.MIN_VALUE) {
      System.arraycopy(MIN_LONG, 0, out, at, MIN_LONG.length);
      at += MIN_LONG.length;
    } else {
      long rest = value;
      if (rest < 0) {
        out[at] = '-';
        rest = -rest;
      }
      int i = at + length;
      do {
        out[--i] = (byte) ('0' + rest % 10);
        rest /= 10;
      } while (rest != 0);
      at += length;
    }
    out[at++] = '\r';
    out[at++] = '\n';
    return at;
  }

  /** The bytes {@link #bulk(byte[], int, long)} writes. */
  static int bulkSize(long value) {
    return bulkSize(decimalLength(value));
  }

  private static final byte[] MIN_LONG =
      Long.toString(Long.MIN_VALUE).getBytes(StandardCharsets.US_ASCII);

  private static int decimalLength(long value) {
    if (value == Long.MIN_VALUE) {
      return MIN_LONG.length;
    }
    int length = value < 0 ? 2 : 1;
    for (long rest = Math.abs(value); rest >= 10; rest /= 10) {
      length++;
    }
    return length;
  }

  /**
   * How many bytes UTF-8 takes for {@code text} from char {@code from}: as {@link String#getBytes}
   * with UTF-8 counts them, an unpaired surrogate being replaced by {@code '?'}.
   */
  static int utf8Length(String text, int from) {
    int length = 0;
    for (int i = from; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x80) {
        length++;
      } else if (c < 0x800) {
        length += 2;
      } else if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c)
            && i + 1 < text.length()
            && Character.isLowSurrogate(text.charAt(i + 1))) {
          length += 4;
          i++;
        } else {
          length++; // '?'
        }
      } else {
        length += 3;
      }
    }
    return length;
  }

  /** Writes {@code text} from char {@code from} as UTF-8 (see {@link #utf8Length}). */
  private static int writeUtf8(byte[] out, int at, String text, int from) {
    for (int i = from; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x80) {
        out[at++] = (byte) c;
      } else if (c < 0x800) {
        out[at++] = (byte) (0xc0 | (c >> 6));
        out[at++] = (byte) (0x80 | (c & 0x3f));
      } else if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c)
            && i + 1 < text.length()
            && Character.isLowSurrogate(text.charAt(i + 1))) {
          int cp = Character.toCodePoint(c, text.charAt(++i));
          out[at++] = (byte) (0xf0 | (cp >> 18));
          out[at++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
          out[at++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
          out[at++] = (byte) (0x80 | (cp & 0x3f));
        } else {
          out[at++] = '?';
        }
      } else {
        out[at++] = (byte) (0xe0 | (c >> 12));
        out[at++] = (byte) (0x80 | ((c >> 6) & 0x3f));
        out[at++] = (byte) (0x80 | (c & 0x3f));
      }
    }
    return at;
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
