package dev.redlock.testkit;

import dev.redlock.Lease;
import dev.redlock.LockEvent;
import dev.redlock.Redlock;

/**
 * What every lease store must do, whatever keeps the leases: the semantics the Redis quorum and the
 * SQL table share, spoken through the public API only ({@link Redlock}, {@link Lease}, {@link
 * LockEvent}s, the exceptions). A store's suite extends this and says how to make a client, how
 * long a short ttl is, how to cut the store off and back, and what its per-node account names.
 *
 * <pre>{@code
 * class PostgresLeasesIT extends LeaseContract {
 *   protected Redlock createClient(Consumer<RedlockConfig.Builder> settings) {
 *     RedlockConfig.Builder b = RedlockConfig.builder()
 *         .store(JdbcLeases.store(dataSource, table))
 *         .nodeTimeout(Duration.ofSeconds(1));
 *     settings.accept(b);
 *     return Redlock.create(b.build());
 *   }
 *   ...
 * }
 * }</pre>
 *
 * <p>Bounds and ttls are written for an ordinary machine and scaled by {@link #TIMING}: on a slow
 * one, run with {@code -Dredlock.test.timing=3} (see {@link Timing}). Stores scale their own ttls
 * and timeouts with it too.
 *
 * <p>The cases, one concern per class: {@link MutexCases}, {@link CloseCases}, {@link SetCases},
 * {@link AsyncAndSemaphoreCases}, {@link ReadWriteCases}; the hooks and shared helpers are {@link
 * ContractBase}'s.
 */
public abstract class LeaseContract extends ReadWriteCases {}
