package dev.redlock.spring;

import dev.redlock.Lease;
import java.util.Optional;

/**
 * The lease of the {@link Locked} method running on this thread: its fencing token for the
 * protected resource, its validity to check right before a side effect.
 *
 * <pre>{@code
 * @Locked(resource = "payouts", ttl = "30s")
 * void pay() {
 *   payouts.write(batch, CurrentLease.fencingToken());  // the store refuses older tokens
 * }
 * }</pre>
 *
 * <p>Bound to the thread that runs the method, for the time it runs; a nested {@code @Locked} call
 * sees its own lease, and the outer one's again once it returns. Work the method hands to another
 * thread does not see it: pass the lease (or its token) along.
 */
public final class CurrentLease {
  private static final ThreadLocal<Lease> CURRENT = new ThreadLocal<>();

  private CurrentLease() {}

  /**
   * The lease of the {@code @Locked} method running on this thread.
   *
   * @throws IllegalStateException if no {@code @Locked} method is running on this thread
   */
  public static Lease get() {
    Lease lease = CURRENT.get();
    if (lease == null) {
      throw new IllegalStateException(
          "no @Locked method is running on this thread: CurrentLease is only set inside one");
    }
    return lease;
  }

  /** The lease of the {@code @Locked} method running on this thread, or empty outside one. */
  public static Optional<Lease> find() {
    return Optional.ofNullable(CURRENT.get());
  }

  /**
   * The fencing token of the {@code @Locked} method running on this thread: {@code
   * get().fencingToken()}.
   *
   * @throws IllegalStateException if no {@code @Locked} method is running on this thread
   */
  public static long fencingToken() {
    return get().fencingToken();
  }

  /** Sets the thread's lease and returns the one it replaces (null: none), to restore after. */
  static Lease enter(Lease lease) {
    Lease previous = CURRENT.get();
    CURRENT.set(lease);
    return previous;
  }

  /** Restores the lease {@link #enter} replaced. */
  static void exit(Lease previous) {
    if (previous == null) {
      CURRENT.remove();
    } else {
      CURRENT.set(previous);
    }
  }
}
