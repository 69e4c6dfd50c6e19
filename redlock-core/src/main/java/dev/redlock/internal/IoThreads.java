package dev.redlock.internal;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The I/O threads of one Redlock: one request to one node occupies one thread for at most the node
 * timeout. Bounded by nodes × connections per node (more threads could only wait for a connection);
 * idle threads end after a while. Daemon threads, so a forgotten Redlock cannot keep a JVM alive;
 * {@code Redlock.close()} stops them.
 */
public final class IoThreads {
  /** Every I/O thread's name starts with this, so tests and thread dumps can find them. */
  public static final String NAME_PREFIX = "redlock-io-";

  private static final AtomicInteger INSTANCES = new AtomicInteger();

  /**
   * The most I/O threads per node: a node that lags, or that must be connected to, has its requests
   * sent (and waited on) by an I/O thread, one each; past this bound the caller does it.
   */
  public static final int PER_NODE = 64;

  private IoThreads() {}

  /**
   * Daemon threads named {@code prefix + instance + "-" + n}, a new instance number per call: a
   * forgotten Redlock cannot keep a JVM alive, and thread dumps say whose thread is whose.
   */
  public static ThreadFactory daemonThreads(String prefix) {
    int instance = INSTANCES.incrementAndGet();
    AtomicInteger count = new AtomicInteger();
    return task -> {
      Thread thread = new Thread(task, prefix + instance + "-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  public static ExecutorService create(int maxThreads) {
    ThreadFactory factory = daemonThreads(NAME_PREFIX);
    // A hand-off queue: a request either finds a free thread or gets a new one up to the bound;
    // past it, it is rejected and counts as a failed vote instead of waiting in a queue.
    return new ThreadPoolExecutor(
        0,
        maxThreads,
        Duration.ofSeconds(30).toNanos(),
        TimeUnit.NANOSECONDS,
        new SynchronousQueue<>(),
        factory);
  }
}
