/**
 * ShedLock on a Redlock: {@link dev.redlock.shedlock.RedlockLockProvider} is the provider to
 * register. Its locks are ShedLock's {@code SimpleLock}s over {@code dev.redlock} leases, so both
 * modules come with it.
 */
module dev.redlock.shedlock {
  requires transitive dev.redlock;
  requires transitive net.javacrumbs.shedlock.core;
  requires org.slf4j;

  exports dev.redlock.shedlock;
}
