package dev.redlock.node;

import java.io.IOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.util.RedisInputStream;

/**
 * What a shared connection's node sends, read with Jedis: a wait, bounded, for a reply to start
 * ({@link RedisInputStream#peek}, which consumes nothing), then the whole reply ({@link
 * Protocol#read}), which must come within a node timeout. So a reader's own short deadline can end
 * only a wait before a reply, never leave half a reply read; a reply that starts and stalls breaks
 * the connection. Confined to the thread that holds the reader role ({@link SharedReplies}), but
 * for {@link #waiting}, a hint any thread may ask for.
 */
final class ReplyStream {
  private final Socket socket;
  private final Buffered in;
  private int soTimeoutMillis = -1; // last value set on the socket

  /** When the node last sent anything. */
  long lastBytesAt = System.nanoTime();

  ReplyStream(Socket socket) throws IOException {
    this.socket = socket;
    this.in = new Buffered(socket.getInputStream());
  }

  /** Jedis's reply stream, telling whether it holds bytes not read yet. */
  private static final class Buffered extends RedisInputStream {
    Buffered(java.io.InputStream in) {
      super(in);
    }

    boolean hasBuffered() {
      return count < limit;
    }
  }

  /** Whether bytes have been read from the socket that are not read as a reply yet. */
  boolean buffered() {
    return in.hasBuffered();
  }

  /** Whether bytes of a reply have come that nobody has read. */
  boolean waiting() {
    try {
      return in.hasBuffered() || in.available() > 0;
    } catch (IOException e) {
      return true; // the reader will find out
    }
  }

  /**
   * Waits for the first byte of the next reply, at most {@code timeoutNanos}, consuming nothing;
   * false if none came (the stream stays usable: plain sockets). Interrupts aside (a virtual
   * thread's would close the socket).
   *
   * @throws JedisConnectionException if the stream failed or ended
   */
  boolean arrives(long timeoutNanos) {
    if (in.hasBuffered()) {
      return true;
    }
    boolean interrupted = Thread.interrupted();
    try {
      setSoTimeout(timeoutNanos);
      in.peek((byte) ':');
      lastBytesAt = System.nanoTime();
      return true;
    } catch (JedisConnectionException e) {
      if (e.getCause() instanceof SocketTimeoutException) {
        return false;
      }
      throw e;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The next reply, whose first byte has come: what {@link Protocol#read} returns, or the {@link
   * JedisDataException} of an error reply (the stream still in step). The rest must come within
   * {@code nodeTimeoutNanos}.
   *
   * @throws JedisConnectionException if the stream failed, ended or stalled mid-reply
   */
  Object read(long nodeTimeoutNanos) {
    boolean interrupted = Thread.interrupted();
    try {
      setSoTimeout(nodeTimeoutNanos);
      Object reply = Protocol.read(in);
      lastBytesAt = System.nanoTime();
      return reply;
    } catch (JedisDataException error) {
      return error;
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void setSoTimeout(long nanos) {
    int millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, (nanos + 999_999) / 1_000_000));
    if (millis != soTimeoutMillis) {
      try {
        socket.setSoTimeout(millis);
      } catch (IOException e) {
        throw new JedisConnectionException(e);
      }
      soTimeoutMillis = millis;
    }
  }
}
