package dev.redlock.node;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy to a local redis-server whose node-to-client bytes can be held back (while {@link
 * #slow}): each chunk's first byte at once, then {@link #firstGapMillis}, then each later byte
 * after {@link #gapMillis}. The delays are the fault it injects; tests wait on {@link #started} and
 * {@link #finished}, never on time.
 */
public final class DelayingProxy implements AutoCloseable {
  public final ServerSocket server = new ServerSocket(0);
  public volatile long firstGapMillis; // before the 2nd byte of a chunk
  public volatile long gapMillis; // before each later byte
  public volatile boolean slow;

  /** Delayed chunks whose first byte went out, and whose every byte went out. */
  public final AtomicInteger started = new AtomicInteger();

  public final AtomicInteger finished = new AtomicInteger();
  final ExecutorService threads = Executors.newCachedThreadPool();

  public DelayingProxy(int target) throws IOException {
    threads.execute(
        () -> {
          try {
            while (true) {
              Socket c = server.accept();
              Socket r = new Socket("127.0.0.1", target);
              threads.execute(() -> pump(c, r, false));
              threads.execute(() -> pump(r, c, true));
            }
          } catch (IOException e) {
            // closed
          }
        });
  }

  private void pump(Socket from, Socket to, boolean fromNode) {
    try {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      byte[] buf = new byte[65536];
      int n;
      while ((n = in.read(buf)) > 0) {
        if (fromNode && slow) {
          for (int i = 0; i < n; i++) {
            if (i == 1) {
              Thread.sleep(firstGapMillis);
            } else if (i > 1) {
              Thread.sleep(gapMillis);
            }
            out.write(buf[i]);
            out.flush();
            if (i == 0) {
              started.incrementAndGet();
            }
          }
          finished.incrementAndGet();
        } else {
          out.write(buf, 0, n);
          out.flush();
        }
      }
    } catch (Exception e) {
      // done
    } finally {
      try {
        from.close();
        to.close();
      } catch (IOException ignored) {
      }
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    threads.shutdownNow();
  }
}
