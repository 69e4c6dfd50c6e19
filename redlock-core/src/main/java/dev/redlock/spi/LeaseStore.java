package dev.redlock.spi;

import dev.redlock.NodeOutcome;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Where leases are kept. The library owns what a lease means (validity on the client's monotonic
 * clock, retries, renewal, loss, events) and asks a store only to {@link #take} (one attempt),
 * {@link #renew} and {@link #giveBack}. A quorum of Redis nodes is one store; a SQL table, given to
 * {@link dev.redlock.config.RedlockConfig.Builder#store}, is another.
 *
 * <p>Implementations are thread-safe, and every call is bounded by the store's timeout ({@link
 * dev.redlock.config.RedlockConfig#nodeTimeout()}).
 *
 * @param <H> what the store keeps about a granted lease
 */
public interface LeaseStore<H extends LeaseStore.Held> extends AutoCloseable {

  /** What a store keeps about one granted lease. */
  interface Held {
    /** The request given to {@link LeaseStore#take}. */
    LeaseRequest request();

    /** The fencing token: larger than every token granted before on each of its resources. */
    long fencingToken();

    /** What each node answered when the lease was granted. */
    List<NodeOutcome> outcomes();
  }

  /**
   * One attempt's raw result: the engine decides from it whether the lease is won, or gives {@code
   * held} back and names the reason.
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
      Objects.requireNonNull(tally, "tally must not be null");
    }
  }

  /** How many yes votes win. */
  int quorum();

  /**
   * Called before each attempt's clock starts: a store still making its first connections waits for
   * them here, bounded. Default: returns.
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
   * One attempt to take what {@code request} asks for, bounded by the store's timeout from {@code
   * start} (the engine's clock, read just before). One that takes no quorum leaves nothing behind
   * that would block the next.
   *
   * <ul>
   *   <li>{@link LeaseRequest.Shape#ALL}: every resource or none, on the keys a lease of each alone
   *       takes; attempts on overlapping sets never wait for each other.
   *   <li>{@link LeaseRequest.Shape#READ}: refused while a writer holds the lock or waits for it;
   *       the token comes from the lock's one counter, shared with writers.
   *   <li>{@link LeaseRequest.Shape#WRITE}: refused while another writer or any unexpired reader
   *       holds the lock; a refusal keeps new readers out for {@link LeaseRequest#intentMillis()}.
   * </ul>
   *
   * @throws InterruptedException if interrupted; the attempt is rolled back
   * @throws UnsupportedOperationException for a shape this store does not take: {@link
   *     LeaseRequest.Shape#ALL} if it cannot take several resources at once, {@link
   *     LeaseRequest.Shape#READ} and {@link LeaseRequest.Shape#WRITE} without {@link
   *     #hasReadWriteLocks()}
   */
  Vote<H> take(LeaseRequest request, long start) throws InterruptedException;

  /** Whether this store takes {@link LeaseRequest.Shape#READ} and {@code WRITE}. Default: false. */
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
   * Extends {@code held} like {@link #renew} without a thread waiting: {@code decided} runs once,
   * on a library thread, when the outcome is decided (a quorum, out of reach, or the store's
   * timeout: it must run even when no answer ever comes). A store that can only wait returns false
   * and does nothing; the engine then calls {@link #renew} on a renewal thread.
   *
   * @return true if the extend was sent and {@code decided} will run
   */
  default boolean renewAsync(H held, long ttlMillis, Consumer<Tally> decided) {
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
   * Asks the store to tell {@code to} of releases of {@code resource} by any client, until as many
   * {@link #unwatchReleases}. Notices may be late or lost; this default tells none.
   */
  default void watchReleases(String resource, Releases to) {}

  /** Undoes one {@link #watchReleases} of {@code resource}. */
  default void unwatchReleases(String resource) {}

  /** Gives {@code held} back, waiting (bounded) until enough of the store has let it go. */
  void giveBack(H held);

  /**
   * {@link #giveBack}, and whether other clients wait for the resource (a quorum of the store's
   * parts told them of this release): the engine then leaves the lock to them. Default: no.
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
