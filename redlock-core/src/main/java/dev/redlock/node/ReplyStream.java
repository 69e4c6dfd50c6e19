package dev.redlock.node;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.util.RedisInputStream;

/**
 * What a shared connection's node sends, read with Jedis. Every reply to our scripts is one line
 * (an integer or an error), so a reply is read ({@link Protocol#read}) only once its whole line is
 * buffered: the read never waits on the socket. Waiting is {@link #arrives}'s, bounded by the
 * reader's own deadline and consuming nothing, so a deadline can end a wait but never leave half a
 * reply read, and a reply that trickles in holds a caller no longer than its deadline. Confined to
 * the thread that holds the reader role ({@link SharedReplies}).
 */
final class ReplyStream {
  private final Socket socket;
  private final Buffered in;
  private int soTimeoutMillis = -1; // last value set on the socket
  long lastBytesAt = System.nanoTime(); // when the node last sent anything

  ReplyStream(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new Buffered(socket.getInputStream());
  }

  /** Jedis's reply stream, which can tell whether a whole line is in and read more keeping it. */
  private static final class Buffered extends RedisInputStream {
    Buffered(InputStream in) {
      super(in, 8192); // not Jedis's configurable size: a reply line must fit
    }

    /** Where the first buffered line ends (its {@code \n}), or -1. */
    int lineEnd() {
      for (int i = count; i < limit; i++) {
        if (buf[i] == '\n') {
          return i;
        }
      }
      return -1;
    }

    boolean readUpTo(int end) {
      return count == end + 1;
    }

    boolean endsWithCr(int end) {
      return end > count && buf[end - 1] == '\r';
    }

    byte next() {
      return buf[count];
    }

    int socketAvailable() throws IOException {
      return in.available();
    }

    /** Appends one read of the socket (waiting as its timeout allows) to what is buffered. */
    void readMore() throws IOException {
      if (count > 0) {
        System.arraycopy(buf, count, buf, 0, limit - count);
        limit -= count;
        count = 0;
      }
      if (limit == buf.length) {
        throw new JedisConnectionException(
            "a reply line longer than " + buf.length + " bytes: not a reply to our scripts");
      }
      int n = in.read(buf, limit, buf.length - limit);
      if (n < 0) {
        throw new JedisConnectionException("Unexpected end of stream.");
      }
      limit += n;
    }
  }

  /** Whether a whole reply is buffered: {@link #read} takes it without waiting. */
  boolean hasReply() {
    return in.lineEnd() >= 0;
  }

  /** {@link #hasReply} after reading what the socket already holds, without waiting. */
  boolean replyWithoutWaiting() {
    try {
      while (!hasReply() && in.socketAvailable() > 0) {
        in.readMore(); // bytes are there: this read does not wait
        lastBytesAt = System.nanoTime();
      }
      return hasReply();
    } catch (IOException e) {
      throw new JedisConnectionException(e);
    }
  }

  /**
   * Waits at most {@code timeoutNanos} until a whole reply is buffered or more bytes of one came,
   * consuming nothing; false if nothing came (a plain socket stays usable). Interrupts are set
   * aside: a virtual thread's would close the socket.
   */
  boolean arrives(long timeoutNanos) {
    if (hasReply()) {
      return true;
    }
    boolean interrupted = Thread.interrupted();
    try {
      setSoTimeout(timeoutNanos);
      in.readMore();
      lastBytesAt = System.nanoTime();
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      throw new JedisConnectionException(e);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The next reply, whose whole line is buffered: an integer, or the {@link JedisDataException} of
   * an error reply (the stream still in step). Any other type breaks the stream: not our scripts'.
   */
  Object read() {
    byte type = in.next();
    if (type != Protocol.COLON_BYTE && type != Protocol.MINUS_BYTE) {
      throw new JedisConnectionException(
          "a reply of type '" + (char) type + "': our scripts answer integers and errors only");
    }
    int end = in.lineEnd();
    if (!in.endsWithCr(end)) {
      throw new JedisConnectionException("a reply line not ended by CRLF: the stream is not ours");
    }
    Object reply;
    try {
      reply = Protocol.read(in);
    } catch (JedisDataException error) {
      reply = error;
    }
    if (!in.readUpTo(end)) {
      throw new JedisConnectionException("a reply read past its line: the stream is not ours");
    }
    return reply;
  }

  private void setSoTimeout(long nanos) throws IOException {
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (nanos + 999_999) / 1_000_000));
    if (millis != soTimeoutMillis) {
      socket.setSoTimeout(millis);
      soTimeoutMillis = millis;
    }
  }
}
