package dev.redlock.spi;

import dev.redlock.NodeOutcome;
import java.util.List;

/**
 * Where leases are kept: the seam between what a lease means and where it lives. The library owns
 * what a lease means — validity on the client's monotonic clock, retries, renewal, loss, {@code
 * withLock}, events, the {@link dev.redlock.Lease} type — and asks a store only to take, extend and
 * give back. A quorum of Redis nodes is one store ({@link dev.redlock.Redlock}); a SQL table is
 * another, given to {@link dev.redlock.RedlockConfig.Builder#store}: a {@link dev.redlock.Redlock}
 * then puts the library's lifecycle over it.
 *
 * <p>Its verbs each mean one thing, distinct from the user's: {@link #take} is one attempt (one
 * vote), where the user's {@code acquire} retries; {@link #renew} moves a held lease's expiry (for
 * the user's {@code extend} and the watchdog's renewals alike); {@link #giveBack} ends it.
 *
 * <p>Implementations are thread-safe, and every call is bounded by the store's own timeout ({@link
 * dev.redlock.RedlockConfig#nodeTimeout()}, which {@link dev.redlock.RedlockConfig.Builder#store}
 * is given).
 *
 * @param <H> what the store keeps about a granted lease
 */
public interface LeaseStore<H extends LeaseStore.Held> extends AutoCloseable {

  /** What a store keeps about one granted lease. */
  interface Held {
    /**
     * The resource this lease locks; for a lease of several ({@link LeaseStore#takeAll}), a label
     * for messages and events: the resources in their sorted order, as a list prints them ({@code
     * [a, b]}).
     */
    String resource();

    /**
     * Every resource this lease locks, sorted: the one {@link #resource()} unless it came from
     * {@link LeaseStore#takeAll}.
     */
    default List<String> resources() {
      return List.of(resource());
    }

    /** The owner token: the proof of ownership, never shown. */
    String token();

    /**
     * The fencing token: larger than every token granted before on the resource (on each of the
     * resources, for a lease of several: one token serves them all).
     */
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
   * One attempt to take every one of {@code resources} at once, all or none, for {@code ttlMillis}
   * with {@code token}, as {@link #take} takes one: the engine counts the vote, decides validity
   * and gives {@code held} back the same way, and {@link #renew} and {@link #giveBack} then act on
   * the whole set. The store takes the resources so that no two attempts on overlapping sets, in
   * any order, can wait for each other, and an attempt that is refused leaves none of them taken.
   * The engine calls it with 2 to {@link dev.redlock.Redlock#MAX_RESOURCES} distinct names that
   * passed {@link #checkResource}, in their natural (sorted) order; a set of one is a {@link
   * #take}. The held lease's {@link Held#fencingToken()} is larger than every token granted before
   * on each of the resources. This default refuses: a store that cannot take several at once.
   *
   * @throws InterruptedException if interrupted; the attempt is rolled back
   * @throws UnsupportedOperationException if this store cannot take several resources at once
   */
  default Vote<H> takeAll(List<String> resources, String token, long ttlMillis, long start)
      throws InterruptedException {
    throw new UnsupportedOperationException(
        "this lease store ("
            + getClass().getSimpleName()
            + ") cannot take several resources at once");
  }

  /**
   * Whether this store has read-write locks ({@link #takeRead}, {@link #takeWrite}): asked when one
   * is made, so that a store without them is refused at once. Default: false.
   */
  default boolean hasReadWriteLocks() {
    return false;
  }

  /**
   * One attempt to take the read-write lock {@code name} for reading, for {@code ttlMillis} with
   * {@code token}, as {@link #take} takes a resource: the engine counts the vote, decides validity
   * and gives {@code held} back the same way, and {@link #renew} and {@link #giveBack} act on this
   * reader alone. Readers do not refuse each other; a reader is refused while a writer holds the
   * lock, and while one waits for it (the store's fairness rule: writer preference, so that a
   * stream of readers cannot keep a writer out). The held lease's {@link Held#fencingToken()} comes
   * from the lock's one counter, shared with writers: larger than every token of a writer that
   * ended before it. A read-write lock's names are apart from plain resources': a lock {@code name}
   * and a resource {@code name} never exclude each other. The engine calls it with a {@code name}
   * that passed {@link #checkResource}. This default refuses.
   *
   * @throws InterruptedException if interrupted; the attempt is rolled back
   * @throws UnsupportedOperationException if this store has no read-write locks
   */
  default Vote<H> takeRead(String name, String token, long ttlMillis, long start)
      throws InterruptedException {
    throw new UnsupportedOperationException(
        "this lease store (" + getClass().getSimpleName() + ") has no read-write locks");
  }

  /**
   * One attempt to take the read-write lock {@code name} for writing, as {@link #takeRead}: refused
   * while another writer or any unexpired reader holds it; a refusal then keeps new readers out for
   * {@code intentMillis} (at most {@code ttlMillis}: until this writer asks again; 0 for a writer
   * that will not), so that they cannot keep it out. The held lease's {@link Held#fencingToken()}
   * is larger than every token granted before on the lock, to readers and writers alike. This
   * default refuses.
   *
   * @throws InterruptedException if interrupted; the attempt is rolled back
   * @throws UnsupportedOperationException if this store has no read-write locks
   */
  default Vote<H> takeWrite(
      String name, String token, long ttlMillis, long intentMillis, long start)
      throws InterruptedException {
    throw new UnsupportedOperationException(
        "this lease store (" + getClass().getSimpleName() + ") has no read-write locks");
  }

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

  /** Where a store tells of releases by anyone ({@link #watchReleases}). */
  @FunctionalInterface
  interface Releases {
    /**
     * {@code resource} was released on part {@code part} of the store (a node: 0 to size - 1) by
     * the lease of {@code fencingToken}. Runs on a store thread: must not block. A hint only.
     */
    void released(String resource, int part, long fencingToken);
  }

  /**
   * Asks the store to tell {@code to} of releases of {@code resource} (by any client), until {@link
   * #unwatchReleases} as many times: waiters then ask again at once instead of after their pause.
   * Returns at once; notices may be late or lost, and this default tells none (waiters poll).
   */
  default void watchReleases(String resource, Releases to) {}

  /** Undoes one {@link #watchReleases} of {@code resource}. */
  default void unwatchReleases(String resource) {}

  /** Gives {@code held} back, waiting (bounded) until enough of the store has let it go. */
  void giveBack(H held);

  /**
   * {@link #giveBack}, and whether other clients wait for the resource (told of this release by a
   * quorum of the store's parts, {@link #watchReleases}): the engine then leaves the lock to them
   * instead of waking its own next waiter, so the clients waiting for one lock take turns. This
   * default gives back and says no.
   */
  default boolean giveBackToWaiters(H held) {
    giveBack(held);
    return false;
  }

  /** Gives every one of {@code held} back at once, on close: waits until all have settled. */
  void giveBackAll(List<H> held);

  /** Stops the store's threads and connections. */
  @Override
  void close();
}
