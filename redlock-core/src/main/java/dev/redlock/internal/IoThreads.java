package dev.redlock.internal;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** The library's daemon threads, so a forgotten Redlock cannot keep a JVM alive. */
public final class IoThreads {
  /** Every I/O thread's name starts with this, so tests and thread dumps can find them. */
  public static final String NAME_PREFIX = "redlock-io-";

  private static final AtomicInteger INSTANCES = new AtomicInteger();

  /** The most I/O threads per node; past it the caller sends the request itself. */
  public static final int PER_NODE = 64;

  private IoThreads() {}

  /** Daemon threads named {@code prefix + instance + "-" + n}, a new instance per call. */
  public static ThreadFactory daemonThreads(String prefix) {
    int instance = INSTANCES.incrementAndGet();
    AtomicInteger count = new AtomicInteger();
    return task -> {
      Thread thread = new Thread(task, prefix + instance + "-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  /**
   * Up to {@code maxThreads} I/O threads, idle ones ending after 30 s. No queue: a task finds a
   * free thread or gets a new one up to the bound; past it, it is rejected, never made to wait.
   */
  public static ExecutorService create(int maxThreads) {
    return new ThreadPoolExecutor(
        0, maxThreads, 30, TimeUnit.SECONDS, new SynchronousQueue<>(), daemonThreads(NAME_PREFIX));
  }
}
