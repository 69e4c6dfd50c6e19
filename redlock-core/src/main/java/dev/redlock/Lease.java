package dev.redlock;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * A lock held on a quorum of nodes, valid for a bounded time: from its grant until its validity
 * runs out ({@code ttl} minus the time the acquisition took minus the clock-drift allowance, on
 * this JVM's monotonic clock), or until it is released. Only a successful {@link #extend} (or
 * renewal) moves the validity forward.
 *
 * <p>Once {@link #isValid()} turns false, another client may hold the lock; a holder that pauses
 * (GC, a frozen VM) between checking validity and acting can act after its lease ended. Check
 * validity right before acting, and pass the {@link #fencingToken()} to the protected resource.
 *
 * <p>Close it with try-with-resources. Thread-safe.
 */
public interface Lease extends AutoCloseable {

  /**
   * The resource name this lease locks, as given to {@code acquire}; for a lease of several, the
   * sorted names as a list prints them ({@code [a, b]}).
   */
  String resource();

  /**
   * Every resource this lease locks, in sorted order: one, or the whole set of a multi-resource
   * lease ({@link Redlock#tryAcquireAll}), held, extended, lost and released as one.
   *
   * @return an unmodifiable list, never empty
   */
  default List<String> resources() {
    return List.of(resource());
  }

  /**
   * The fencing token of this acquisition: greater than every token issued earlier for its resource
   * (for each of them, for a set), by any client. Have the protected resource refuse writes with a
   * token smaller than one it has seen (docs/fencing.md).
   *
   * @return a positive number, unique to this acquisition among those of its resource
   */
  long fencingToken();

  /**
   * The fencing token of {@code resource} in this lease: greater than every token issued earlier
   * for that resource. This library's stores draw one token per acquisition, so it is {@link
   * #fencingToken()}.
   *
   * @param resource one of {@link #resources()}
   * @return a positive number
   * @throws NullPointerException if {@code resource} is null
   * @throws IllegalArgumentException if this lease does not lock {@code resource}
   */
  default long fencingToken(String resource) {
    Objects.requireNonNull(resource, "resource must not be null");
    if (!resources().contains(resource)) {
      throw new IllegalArgumentException(
          "resource must be one this lease locks " + resources() + ", was '" + resource + "'");
    }
    return fencingToken();
  }

  /**
   * How much validity is left: zero once the lease has expired or been released.
   *
   * @return the remaining validity, never negative
   */
  Duration remainingValidity();

  /**
   * Whether the lease is still held: not released and validity not yet run out.
   *
   * @return true while the lease is valid
   */
  boolean isValid();

  /**
   * What each node answered to the acquisition, in configured order ({@link
   * NodeOutcome.Status#PENDING} while a node has not answered).
   *
   * @return the per-node account of the grant
   */
  List<NodeOutcome> nodeOutcomes();

  /**
   * Throws if the lease is no longer held: call it right before each side effect on the protected
   * resource.
   *
   * @throws LeaseLostException if the lease was lost or its validity ran out; the lease is then
   *     declared lost, and {@link #onLost} callbacks run if they have not yet
   * @throws IllegalStateException if the lease was released
   */
  void checkValid();

  /**
   * Keeps the lease alive until it is released: an owner-checked extend to the original ttl every
   * {@code ttl × renewalFraction}, on shared timer threads. Idempotent. A renewal that misses the
   * quorum is retried while validity is left; the lease is lost when no renewal can win in time,
   * when its validity runs out, or after {@code maxHold} from the grant. A lost lease stays lost.
   * {@link Redlock#close()} stops renewing and waits for the holder to release it, at most to the
   * end of its validity.
   *
   * @return this lease
   * @throws IllegalArgumentException if the ttl is too short to renew: {@code ttl ×
   *     renewalFraction} must be at least {@code nodeTimeout}, and {@code ttl × (1 −
   *     renewalFraction)} more than the drift allowance plus two {@code nodeTimeout}s
   * @throws LeaseLostException if the lease is no longer valid
   * @throws IllegalStateException if the lease was released, or its Redlock is closed
   */
  Lease keepAlive();

  /**
   * Registers a callback that runs once if the lease is lost: on a callback thread when the library
   * found the loss, on the calling thread when {@link #checkValid()} or {@link #keepAlive()} found
   * it, at once if it is lost already; never after a release. A callback that throws is logged.
   * Registering also arms a timer for the deadline, so a lease without {@link #keepAlive()} reports
   * its expiry too.
   *
   * @param callback receives the loss, with its reason
   * @throws NullPointerException if {@code callback} is null
   */
  void onLost(Consumer<? super LeaseLostException> callback);

  /**
   * Extends the lease so that it stays valid for at least {@code ttl} from now (less elapsed time
   * and drift), by an owner-checked update on every node that may hold it. Succeeds only if a
   * quorum still held the lease and validity is left; on failure the lease keeps its previous
   * validity. A lease no longer valid is never extended (false, without asking the nodes). An
   * extend never shortens: a shorter {@code ttl} changes nothing, and returns true if a quorum
   * confirmed the lease.
   *
   * @param ttl the new time to live, counted from now
   * @return true if the lease was extended; false if it could not be (lost, expired, too few nodes
   *     answered in time, or its Redlock is closed). If the calling thread is interrupted while
   *     waiting, the interrupt flag is set again and this returns false.
   * @throws NullPointerException if {@code ttl} is null
   * @throws IllegalArgumentException if {@code ttl} is not positive, or not larger than the
   *     clock-drift allowance plus {@code nodeTimeout}
   * @throws IllegalStateException if the lease was released
   */
  boolean extend(Duration ttl);

  /**
   * Releases the lock: an owner-checked delete on every node that may hold it, waiting at most
   * {@code nodeTimeout}. Idempotent. Does not throw when nodes fail to answer: their keys expire by
   * their ttl, and the failure is logged.
   */
  void release();

  /** Same as {@link #release()}. */
  @Override
  void close();
}
