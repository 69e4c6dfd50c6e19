package dev.redlock.internal;

/**
 * A wait that goes on through an interrupt, because something is still owed when it ends (a
 * release, the I/O threads' last replies, the turns close() must hold). The interrupt is not lost:
 * the flag is set again once the wait is over.
 */
public final class Uninterruptibly {
  /**
   * One bounded wait: it must recompute what is left of its own deadline each time it is called.
   */
  @FunctionalInterface
  public interface Wait<T> {
    T await() throws InterruptedException;
  }

  private Uninterruptibly() {}

  /**
   * Calls {@code wait} again after each interrupt until it returns, then sets the interrupt flag
   * again if it was set before or during the wait. Bounded only by {@code wait}'s own deadline.
   */
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
