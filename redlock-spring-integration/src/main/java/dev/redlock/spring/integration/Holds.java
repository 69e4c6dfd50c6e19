package dev.redlock.spring.integration;

import dev.redlock.Lease;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One key's state in a registry while some thread holds or waits for it: the local lock that makes
 * the registry's threads take turns and counts a thread's holds, and the lease the holder has.
 * {@link #lease} and {@link #broken} are written only by the thread that holds {@link #local}.
 */
final class Holds {
  final ReentrantLock local = new ReentrantLock();

  /**
   * Threads waiting plus holds outstanding; changed only inside the registry map's compute, read by
   * the registry's {@code close()}.
   */
  volatile int users;

  /**
   * The holder's lease: non-null while {@link #local} is held. It may have been lost since. Read by
   * the registry's {@code close()}.
   */
  volatile Lease lease;

  /**
   * The lease was lost during the current hold and a reentrant lock took another: what ran in
   * between may have overlapped another holder, which the last unlock reports.
   */
  boolean broken;
}
