/**
 * Redlock for Java: a distributed lock that holds a lease on a majority of N independent Redis
 * nodes.
 *
 * <p>The entry point is {@link dev.redlock.Redlock#create(RedlockConfig)}:
 *
 * <pre>{@code
 * RedlockConfig config = RedlockConfig.builder()
 *     .nodes(List.of("redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379"))
 *     .build();
 * try (Redlock redlock = Redlock.create(config);
 *      Lease lease = redlock.acquire("ledger:2026-11-29", Duration.ofSeconds(30), Duration.ofSeconds(5))) {
 *   if (lease.isValid()) {
 *     settle();
 *   }
 * }
 * }</pre>
 *
 * <p>The same {@link dev.redlock.Redlock}, configured the same way, keeps its leases in another
 * store instead of on Redis nodes: {@link dev.redlock.RedlockConfig.Builder#store} (a SQL table,
 * from {@code redlock-jdbc}).
 *
 * <p>{@link dev.redlock.Lease} is what a holder has; {@link dev.redlock.LockUnavailableException}
 * says why a lock could not be had, with what each node answered. {@link
 * dev.redlock.Redlock#semaphore} gives a {@link dev.redlock.Semaphore}: at most K leases of a name
 * at once, each permit a lease.
 */
package dev.redlock;
