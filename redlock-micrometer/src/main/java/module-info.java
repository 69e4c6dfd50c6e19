/**
 * The lock's events as Micrometer meters: {@link dev.redlock.micrometer.RedlockMetrics} is the
 * listener to register. It is a {@code dev.redlock} listener over a Micrometer registry, so both
 * modules come with it.
 */
module dev.redlock.micrometer {
  requires transitive dev.redlock;
  requires transitive micrometer.core;

  exports dev.redlock.micrometer;
}
