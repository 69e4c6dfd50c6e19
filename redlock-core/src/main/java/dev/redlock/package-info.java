/**
 * Redlock for Java: a distributed lock that holds a lease on a majority of N independent Redis
 * nodes, or in another store ({@link dev.redlock.config.RedlockConfig.Builder#store}).
 *
 * <p>The entry point is {@link dev.redlock.Redlock#create(dev.redlock.config.RedlockConfig)}; a
 * {@link dev.redlock.Lease} is what a holder has, and {@link dev.redlock.LockUnavailableException}
 * says why a lock could not be had, with what each node answered.
 */
package dev.redlock;
