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
     * What the attempt asked for: the request given to {@link LeaseStore#take}, with the lease's
     * shape, resources and owner token.
     */
    LeaseRequest request();

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
   * One attempt to take what {@code request} asks for; the engine read its clock ({@code start})
   * just before, and bounds the attempt by the store's timeout from then. The engine counts the
   * vote, decides validity and gives {@code held} back; {@link #renew} and {@link #giveBack} then
   * act on the whole lease. An attempt that does not take a quorum leaves nothing behind that would
   * block the next. The held lease's {@link Held#fencingToken()} is larger than every token granted
   * before on each resource it covers.
   *
   * <ul>
   *   <li>{@link LeaseRequest.Shape#ALL}: every resource or none. No two attempts on overlapping
   *       sets, in any order, may wait for each other; the resources are the ones a lease of each
   *       alone takes, so the two kinds of lease exclude each other.
   *   <li>{@link LeaseRequest.Shape#READ}: readers do not refuse each other; a reader is refused
   *       while a writer holds the lock or waits for it (writer preference, so that a stream of
   *       readers cannot keep a writer out). The token comes from the lock's one counter, shared
   *       with writers. A read-write lock's names are apart from plain resources'.
   *   <li>{@link LeaseRequest.Shape#WRITE}: refused while another writer or any unexpired reader
   *       holds the lock; a refusal then keeps new readers out for {@link
   *       LeaseRequest#intentMillis()}.
   * </ul>
   *
   * @throws InterruptedException if interrupted; the attempt is rolled back
   * @throws UnsupportedOperationException for a shape this store does not take: {@link
   *     LeaseRequest.Shape#ALL} if it cannot take several resources at once, {@link
   *     LeaseRequest.Shape#READ} and {@link LeaseRequest.Shape#WRITE} without {@link
   *     #hasReadWriteLocks()}
   */
  Vote<H> take(LeaseRequest request, long start) throws InterruptedException;

  /**
   * Whether this store has read-write locks ({@link LeaseRequest.Shape#READ}, {@link
   * LeaseRequest.Shape#WRITE}): asked when one is made, so that a store without them is refused at
   * once. Default: false.
   */
  default boolean hasReadWriteLocks() {
    return false;
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
