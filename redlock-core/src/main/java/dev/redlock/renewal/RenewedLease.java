package dev.redlock.renewal;

import dev.redlock.LeaseLostException;
import dev.redlock.NodeOutcome;
import dev.redlock.spi.Tally;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * What a {@link Renewal} needs of the lease it keeps alive, whatever store holds it. Times are on
 * the monotonic clock, in nanoseconds.
 */
public interface RenewedLease {
  String resource();

  boolean isValid();

  long validUntil();

  /** The start of the latest successful acquisition, renewal or extend. */
  long renewedFrom();

  long ttlMillis();

  /** The store's votes on renewing the lease to {@code millis}, this thread waiting for them. */
  Tally renew(long millis) throws InterruptedException;

  /**
   * The same without a waiting thread, the votes passed to {@code then} on an I/O thread; false,
   * with nothing sent, if the store can only wait.
   */
  boolean renewAsync(long millis, Consumer<Tally> then);

  /**
   * Applies the votes on a renewal or extend sent at {@code start} for {@code millis}: true if they
   * extended the lease (a quorum, in time, the lease still held), the event told on a callback
   * thread if {@code onLibraryThread}.
   */
  boolean applyVotes(Tally votes, long start, long millis, boolean onLibraryThread);

  /** Declares the lease lost from a library thread (a timer, a renewal). */
  void loseOnLibraryThread(LeaseLostException.Reason reason, List<NodeOutcome> outcomes);

  /** Serializes extends by hand. */
  ReentrantLock extendLock();

  /**
   * @throws IllegalStateException if the lease was released, the message ending in {@code advice}
   */
  void checkNotReleased(String advice);
}
