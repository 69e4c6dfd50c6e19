package dev.redlock.internal;

/**
 * A wait that goes on through an interrupt, because something is still owed when it ends (a
 * release, the I/O threads' last replies, the turns close() must hold). The interrupt is not lost:
 * the flag is set again once the wait is over.
 */
public final class Uninterruptibly {
  /** One bounded wait, which recomputes what is left of its deadline on each call. */
  @FunctionalInterface
  public interface Wait<T> {
    T await() throws InterruptedException;
  }

  private Uninterruptibly() {}

  /** Calls {@code wait} again after each interrupt until it returns, then restores the flag. */
  public static <T> T await(Wait<T> wait) {
    boolean interrupted = Thread.interrupted();
    try {
      for (; ; ) {
        try {
          return wait.await();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
