package dev.redlock.spi;

import dev.redlock.NodeOutcome;
import java.util.List;

/**
 * Where leases are kept: the seam between what a lease means and where it lives. The library owns
 * what a lease means — validity on the client's monotonic clock, retries, renewal, loss, {@code
 * withLock}, events, the {@link dev.redlock.Lease} type — and asks a store only to take, extend and
 * give back. A quorum of Redis nodes is one store ({@link dev.redlock.Redlock}); a SQL table is
 * another. {@link dev.redlock.LockService#over} puts the library's lifecycle over a store.
 *
 * <p>Its verbs each mean one thing, distinct from the user's: {@link #take} is one attempt (one
 * vote), where the user's {@code acquire} retries; {@link #renew} moves a held lease's expiry (for
 * the user's {@code extend} and the watchdog's renewals alike); {@link #giveBack} ends it.
 *
 * <p>Implementations are thread-safe, and every call is bounded by the store's own timeout ({@link
 * dev.redlock.LockSettings#timeout()}).
 *
 * @param <H> what the store keeps about a granted lease
 */
public interface LeaseStore<H extends LeaseStore.Held> extends AutoCloseable {

  /** What a store keeps about one granted lease. */
  interface Held {
    String resource();

    /** The owner token: the proof of ownership, never shown. */
    String token();

    long fencingToken();

    /** What each node answered when the lease was granted. */
    List<NodeOutcome> outcomes();
  }

  /**
   * One attempt's raw result, from which the engine alone decides: the lease is won only if a
   * quorum took it and validity is left when the engine reads its clock; otherwise the engine gives
   * {@code held} back (if any) and names the reason from the account (refusals that alone rule out
   * a quorum: held elsewhere; else the quorum was unreachable, or the validity ran out).
   *
   * @param held what a quorum took, or null if the store could not take it (it has then rolled back
   *     what it sent)
   * @param yes the yes votes when the store stopped counting
   * @param tally the account (which may still grow with late answers)
   */
  record Vote<H>(H held, int yes, Tally tally) {
    /**
     * Creates a vote.
     *
     * @throws NullPointerException if {@code tally} is null
     */
    public Vote {
      java.util.Objects.requireNonNull(tally, "tally must not be null");
    }
  }

  /** How many yes votes win. */
  int quorum();

  /**
   * Called before each attempt, before its clock starts: a store still making its first connections
   * waits for them here, bounded (a first attempt must not be lost to connection setup, which can
   * take longer than a request). Returns at once afterwards. Default: returns.
   *
   * @throws InterruptedException if interrupted while waiting; nothing was sent
   */
  default void awaitConnected() throws InterruptedException {}

  /** How many nodes (or servers) are asked. */
  int size();

  /**
   * Refuses a resource name the store cannot take.
   *
   * @throws IllegalArgumentException naming the rule
   */
  void checkResource(String resource);

  /**
   * One attempt to take {@code resource} for {@code ttlMillis} with {@code token}; the engine read
   * its clock ({@code start}) just before, and bounds the attempt by the store's timeout from then.
   * An attempt that does not take a quorum leaves nothing behind that would block the next.
   *
   * @throws InterruptedException if interrupted; the attempt is rolled back
   */
  Vote<H> take(String resource, String token, long ttlMillis, long start)
      throws InterruptedException;

  /**
   * Extends {@code held} to {@code ttlMillis} from now and waits for the decision; the engine
   * counts the yes votes against {@link #quorum()}.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  Tally renew(H held, long ttlMillis) throws InterruptedException;

  /**
   * Extends {@code held} like {@link #renew} without any thread waiting for the outcome: {@code
   * decided} runs once, on a library thread, when the outcome is decided (a quorum, out of reach,
   * or the store's timeout). Renewals use it so that thousands of leases renew on a few threads. A
   * store that can only wait returns false and does nothing; the engine then calls {@link #renew}
   * on a renewal thread.
   *
   * @return true if the extend was sent and {@code decided} will run
   */
  default boolean renewAsync(H held, long ttlMillis, java.util.function.Consumer<Tally> decided) {
    return false;
  }

  /** Gives {@code held} back, waiting (bounded) until enough of the store has let it go. */
  void giveBack(H held);

  /** Gives every one of {@code held} back at once, on close: waits until all have settled. */
  void giveBackAll(List<H> held);

  /** Stops the store's threads and connections. */
  @Override
  void close();
}
