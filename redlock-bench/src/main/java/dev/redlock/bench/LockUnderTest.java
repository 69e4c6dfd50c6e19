package dev.redlock.bench;

/** One implementation measured by the load driver: one uncontended acquire + release per cycle. */
interface LockUnderTest extends AutoCloseable {
  String name();

  /** Acquires {@code key} on the nodes and releases it; throws if the lock was not won. */
  void cycle(String key) throws Exception;

  @Override
  void close();
}
