package dev.redlock;

/**
 * Work done under a lock by {@link Redlock#withLock}. It may throw any checked exception, which
 * {@code withLock} rethrows unchanged, without wrapping.
 *
 * <pre>{@code
 * Receipt receipt = redlock.withLock("ledger:2026-11-29", ttl, maxWait, lease -> settle(lease));
 * }</pre>
 *
 * @param <T> the result
 * @param <E> the checked exception the work may throw ({@link RuntimeException} if none)
 */
@FunctionalInterface
public interface LeaseTask<T, E extends Exception> {
  /**
   * Does the work. The lease is renewed while this runs; check {@link Lease#checkValid()} right
   * before each side effect, and stop when the thread is interrupted.
   *
   * @param lease the lease held for the duration of the work
   * @return the result, returned by {@code withLock}
   * @throws E any failure, rethrown by {@code withLock} unchanged
   */
  T run(Lease lease) throws E;
}
