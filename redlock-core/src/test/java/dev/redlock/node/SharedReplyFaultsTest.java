package dev.redlock.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * What a shared connection does when reading goes wrong, on a real {@code redis-server}: an {@code
 * Error} thrown with part of a reply consumed, a reply that stalls or trickles in once started, and
 * a {@code NOSCRIPT} read by a thread whose interrupt flag is set.
 */
class SharedReplyFaultsTest {
  private static LocalRedisServer redis;
  private static int port;

  @BeforeAll
  static void startRedis() throws Exception {
    redis = LocalRedisServer.start(false);
    port = redis.port;
  }

  @AfterAll
  static void stopRedis() throws Exception {
    if (redis != null) {
      redis.close();
    }
  }

  /** Hands the reader part of the next reply line, then throws an {@code OutOfMemoryError}. */
  static final class Injecting extends FilterInputStream {
    static volatile boolean armed;
    private byte[] pending;
    private int pos;
    private boolean throwNext;

    Injecting(InputStream in) {
      super(in);
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (throwNext) {
        throwNext = false;
        throw new OutOfMemoryError("simulated: heap exhausted while a reply was being read");
      }
      if (pending != null) {
        int n = Math.min(len, pending.length - pos);
        System.arraycopy(pending, pos, b, off, n);
        pos += n;
        if (pos == pending.length) {
          pending = null;
        }
        return n;
      }
      if (!armed) {
        return super.read(b, off, len);
      }
      armed = false;
      ByteArrayOutputStream line = new ByteArrayOutputStream();
      byte[] one = new byte[4096];
      while (true) {
        int n = in.read(one);
        if (n < 0) {
          throw new IOException("eof");
        }
        line.write(one, 0, n);
        String s = line.toString(java.nio.charset.StandardCharsets.ISO_8859_1);
        if (s.indexOf("\r\n") >= 0) {
          break;
        }
      }
      byte[] all = line.toByteArray();
      String s = new String(all, java.nio.charset.StandardCharsets.ISO_8859_1);
      int end = s.indexOf("\r\n");
      int cut = s.lastIndexOf(':', end);
      if (cut <= 0) {
        cut = end / 2;
      }
      System.arraycopy(all, 0, b, off, cut);
      pending = java.util.Arrays.copyOfRange(all, cut, all.length);
      pos = 0;
      throwNext = true;
      return cut;
    }
  }

  /**
   * An {@code Error} while a reply is read (part of it consumed) breaks the connection: the next
   * reader must never parse from the middle of that reply, where {@code :39.} of an error's text
   * would read as a "yes" with a fencing token.
   */
  @Test
  void anErrorWhileAReplyIsReadBreaksTheConnection() throws Exception {
    NodeKeys keys = NodeKeys.of("redlock:", 60_000, true);
    try (Jedis admin = new Jedis("127.0.0.1", port)) {
      admin.flushAll();
    }
    ExecutorService io = Executors.newCachedThreadPool();
    Socket socket =
        new Socket() {
          @Override
          public InputStream getInputStream() throws IOException {
            return new Injecting(super.getInputStream());
          }
        };
    SharedConnection connection =
        redis.sharedConnection(socket, io, keys, TimeUnit.SECONDS.toNanos(2));
    try {
      connection // the script cached; the new node answers quarantined
          .send(new NodeRequest(NodeRequest.Verb.ACQUIRE, "redlock:warm", "t0", 10_000))
          .finish(2_000_000_000L);
      try (Jedis admin = new Jedis("127.0.0.1", port)) {
        admin.del(keys.lifeKey());
        admin.rpush(keys.lifeKey(), "x"); // the guard's GET fails: WRONGTYPE, nothing set
      }
      Exchange acquire =
          connection.send(new NodeRequest(NodeRequest.Verb.ACQUIRE, "redlock:job", "tA", 10_000));
      Injecting.armed = true;
      assertThrows(Throwable.class, () -> acquire.finish(2_000_000_000L));
      assertFalse(connection.isOpen(), "the connection broke with the Error");
      assertThrows(RuntimeException.class, () -> acquire.finish(2_000_000_000L));
      try (Jedis admin = new Jedis("127.0.0.1", port)) {
        assertNull(admin.get("redlock:job"));
      }
    } finally {
      Injecting.armed = false;
      connection.close();
      io.shutdownNow();
    }
  }

  /**
   * A caller's deadline holds once its reply has started: a reply whose first byte came and whose
   * rest stalls, or trickles in a byte at a time (each gap below the node timeout), does not hold
   * the caller past its own bound. The bound asserted is far above the caller's 200 ms and far
   * below what reading the stalled reply takes.
   */
  @Test
  void aCallersDeadlineHoldsOnceItsReplyHasStarted() throws Exception {
    try (DelayingProxy proxy = new DelayingProxy(port)) {
      ExecutorService io = Executors.newCachedThreadPool();
      LockNode node =
          LockNode.connect(
              NodeUri.parse("redis://127.0.0.1:" + proxy.server.getLocalPort()),
              Duration.ofSeconds(10), // node timeout
              Duration.ofSeconds(2),
              1,
              NodeKeys.of("redlock:", 60_000, true),
              null,
              io);
      try {
        node.open();
        node.begin(new NodeRequest(NodeRequest.Verb.EXTEND, "redlock:none", "t", 30_000))
            .finish(2_000_000_000L);
        proxy.firstGapMillis = 6000; // the first byte, then 6 s, then the rest
        proxy.gapMillis = 0;
        proxy.slow = true;
        assertGivesUpWithinItsBound(node);
        proxy.firstGapMillis = 3000; // a byte every 3 s: ":0\r\n" takes 9 s
        proxy.gapMillis = 3000;
        assertGivesUpWithinItsBound(node);
      } finally {
        node.close();
        io.shutdownNow();
      }
    }
  }

  private static void assertGivesUpWithinItsBound(LockNode node) {
    long t0 = System.nanoTime();
    assertThrows(
        RuntimeException.class,
        () ->
            node.begin(new NodeRequest(NodeRequest.Verb.EXTEND, "redlock:none", "t", 30_000))
                .finish(TimeUnit.MILLISECONDS.toNanos(200)));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertTrue(ms < 2500, "finish(200 ms) returned after " + ms + " ms");
  }

  /**
   * After {@code SCRIPT FLUSH}, a release read by a thread whose interrupt flag is set is still
   * sent again with its source (a release is owed whatever the interrupt), and the flag is kept.
   */
  @Test
  void aReleaseFromAnInterruptedThreadIsResentAfterAScriptFlush() throws Exception {
    ExecutorService io = Executors.newCachedThreadPool();
    LockNode node =
        LockNode.connect(
            NodeUri.parse("redis://127.0.0.1:" + port),
            Duration.ofSeconds(2),
            Duration.ofSeconds(2),
            1,
            NodeKeys.of("redlock:", 60_000, true),
            null,
            io);
    try (Jedis admin = new Jedis("127.0.0.1", port)) {
      node.open();
      node.begin(new NodeRequest(NodeRequest.Verb.EXTEND, "redlock:none", "t", 30_000))
          .finish(2_000_000_000L);
      admin.set("redlock:owned", "tokR");
      admin.scriptFlush();
      Thread.currentThread().interrupt();
      long released;
      try {
        released =
            node.begin(new NodeRequest(NodeRequest.Verb.RELEASE, "redlock:owned", "tokR", 0))
                .finish(2_000_000_000L);
      } finally {
        assertTrue(Thread.interrupted(), "the interrupt flag is kept");
      }
      assertEquals(1, released);
      assertNull(admin.get("redlock:owned"));
    } finally {
      node.close();
      io.shutdownNow();
    }
  }
}
