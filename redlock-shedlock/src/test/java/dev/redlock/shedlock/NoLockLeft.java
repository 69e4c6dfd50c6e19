package dev.redlock.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * After each test: no lock is left in {@link CurrentLock} on the test's thread (every lock the test
 * took there was unlocked or extended away). One that is left is unlocked, so the next test on this
 * thread starts clean, and the test fails.
 */
final class NoLockLeft implements AfterEachCallback {
  @Override
  public void afterEach(ExtensionContext context) {
    Optional<RedlockSimpleLock> left = CurrentLock.find();
    while (CurrentLock.find().isPresent()) {
      CurrentLock.get().unlock();
    }
    assertEquals(Optional.empty(), left, "a lock left on the test's thread");
  }
}
