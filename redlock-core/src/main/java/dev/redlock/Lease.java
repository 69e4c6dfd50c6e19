package dev.redlock;

import java.time.Duration;

/**
 * A lock held on a quorum of nodes, valid for a bounded time.
 *
 * <p>A lease is <em>valid</em> from the moment it is granted until its validity runs out ({@code
 * ttl} minus the time the acquisition took minus the clock-drift allowance), or until it is
 * released. Validity is measured on this JVM's monotonic clock and never grows by itself; only a
 * successful {@link #extend(Duration)} moves it forward.
 *
 * <p><strong>What a lease cannot promise.</strong> Once {@link #isValid()} turns false, another
 * client may hold the lock. A holder that pauses (GC, a frozen VM, a slow disk) between checking
 * validity and acting on the protected resource can act after its lease ended; check validity as
 * close to the action as possible, and keep work inside the lease much shorter than the ttl.
 *
 * <p>Close it with try-with-resources: {@link #close()} releases the lock on every node. A lease is
 * safe to use from several threads.
 */
public interface Lease extends AutoCloseable {

  /**
   * The resource name this lease locks, as given to {@code acquire}. For a lease of several
   * resources ({@link Redlock#tryAcquireAll}), a label for logs and events: the resources in sorted
   * order as a list prints ({@code [a, b]}); {@link #resources()} has the names.
   */
  String resource();

  /**
   * Every resource this lease locks, in sorted order: the one {@link #resource()} of a lease of one
   * resource, or the whole set of a multi-resource lease ({@link Redlock#tryAcquireAll}), which is
   * held, extended, lost and released as one.
   *
   * @return an unmodifiable list, never empty
   */
  default java.util.List<String> resources() {
    return java.util.List.of(resource());
  }

  /**
   * The fencing token of this acquisition: for one resource, a token issued later is strictly
   * greater than every token issued earlier, by any client. Pass it to the protected resource and
   * have it refuse writes carrying a token smaller than one it has seen (docs/fencing.md): that
   * stops a holder who paused past its lease, which no lock can stop by itself.
   *
   * <p>A multi-resource lease has one token for its whole set: greater than every token issued
   * earlier for each of its resources ({@link #fencingToken(String)} returns it for each).
   *
   * @return a positive number, unique to this acquisition among those of its resource
   */
  long fencingToken();

  /**
   * The fencing token of {@code resource} in this lease: strictly greater than every token issued
   * earlier for that resource, by any client, whether to a lease of it alone or of a set holding
   * it. Pass it to the part of the protected system that {@code resource} guards. The stores of
   * this library draw one token per acquisition, so every resource of a multi-resource lease has
   * the same one, and it is {@link #fencingToken()}: a write that touches several of the resources
   * may carry that one number to each.
   *
   * @param resource one of {@link #resources()}
   * @return a positive number
   * @throws NullPointerException if {@code resource} is null
   * @throws IllegalArgumentException if this lease does not lock {@code resource}
   */
  default long fencingToken(String resource) {
    java.util.Objects.requireNonNull(resource, "resource must not be null");
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
   * What each node answered to the acquisition, in configured order. A node that had not answered
   * when the quorum was reached shows its later answer, or {@link NodeOutcome.Status#PENDING} while
   * it still has not.
   *
   * @return the per-node account of the grant
   */
  java.util.List<NodeOutcome> nodeOutcomes();

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
   * Keeps the lease alive until it is released: an owner-checked extend to the original ttl on
   * every node, every {@code ttl × renewalFraction}, from two shared timer threads (not a thread
   * per lease). Idempotent.
   *
   * <p>A renewal that does not win a quorum while validity is left loses the lease at once. If
   * renewals hang, the lease is lost when its validity runs out, whatever the I/O is doing. Renewal
   * stops after {@code maxHold} from the grant, and the lease is then lost by policy. A lost lease
   * is never renewed again: acquire a new one.
   *
   * @return this lease
   * @throws IllegalArgumentException if the ttl is too short to renew: {@code ttl ×
   *     renewalFraction} must be at least {@code nodeTimeout}, and {@code ttl × (1 −
   *     renewalFraction)} more than the drift allowance plus two {@code nodeTimeout}s
   * @throws LeaseLostException if the lease is no longer valid
   * @throws IllegalStateException if the lease was released
   */
  Lease keepAlive();

  /**
   * Registers a callback that runs once if the lease is lost (renewal failed, validity ran out, or
   * {@code maxHold} reached): on one of the Redlock's callback threads when a timer or a renewal
   * found the loss (a callback that blocks holds one of them, never another lease's renewal or
   * deadline; keep it short all the same), on the calling thread when {@link #checkValid()} or
   * {@link #keepAlive()} found it. It runs at once, on the calling thread, if the lease is lost
   * already; never after a release. A callback that throws is logged and does not stop the others.
   *
   * <p>Registering a callback also arms a timer for the lease's deadline, so a lease without {@link
   * #keepAlive()} reports its expiry too.
   *
   * @param callback receives the loss, with its reason
   * @throws NullPointerException if {@code callback} is null
   */
  void onLost(java.util.function.Consumer<? super LeaseLostException> callback);

  /**
   * Extends the lease so that it stays valid for at least {@code ttl} from now (less elapsed time
   * and drift), by an owner-checked update on every node that may hold it.
   *
   * <p>Succeeds only if a quorum of nodes still held this lease's key and extended it, and the new
   * validity is positive; then the validity is moved forward. On failure the lease keeps its
   * previous validity, which still bounds how long it is safe to act. A lease that is no longer
   * valid is never extended: this returns false without contacting the nodes.
   *
   * <p><b>An extend never shortens.</b> A {@code ttl} shorter than what the lease has left changes
   * nothing: the stores keep the longer life (a node's key, a table's row), the lease keeps its
   * validity, and this returns true if a quorum confirmed it still holds the lease. To give the
   * lock up sooner, release it. So an extend and a {@link #keepAlive() renewal} that cross, or an
   * extend whose reply was lost, can never leave a key shorter-lived than a validity computed from
   * it.
   *
   * @param ttl the new time to live, counted from now
   * @return true if the lease was extended; false if it could not be (lost, expired, or too few
   *     nodes answered in time). If the calling thread is interrupted while waiting, the interrupt
   *     flag is set again and this returns false.
   * @throws NullPointerException if {@code ttl} is null
   * @throws IllegalArgumentException if {@code ttl} is not positive, or not larger than the
   *     clock-drift allowance plus {@code nodeTimeout}
   * @throws IllegalStateException if the lease was released
   */
  boolean extend(Duration ttl);

  /**
   * Releases the lock: an owner-checked delete on every node that may hold it, sent to all nodes at
   * once. Never deletes a key that another owner took after this lease expired.
   *
   * <p>Idempotent: the second and later calls do nothing. It does not throw when nodes fail to
   * answer: the keys on those nodes expire by their ttl, and the failure is logged with the
   * per-node account. It waits at most {@code nodeTimeout} for the replies.
   */
  void release();

  /** Same as {@link #release()}. */
  @Override
  void close();
}
