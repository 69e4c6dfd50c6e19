/**
 * ShedLock on a Redlock: {@link dev.redlock.shedlock.RedlockLockProvider} is the {@code
 * LockProvider} to register, {@link dev.redlock.shedlock.CurrentLock} gives a running job its lock
 * and fencing token.
 *
 * <pre>{@code
 * @Bean
 * LockProvider lockProvider(Redlock redlock) {
 *   return RedlockLockProvider.create(redlock, "shedlock:");
 * }
 *
 * @Scheduled(cron = "0 0 2 * * *")
 * @SchedulerLock(name = "settlement", lockAtMostFor = "50s", lockAtLeastFor = "30s")
 * void settle() {
 *   ledger.settle(batch, CurrentLock.fencingToken());
 * }
 * }</pre>
 */
package dev.redlock.shedlock;
