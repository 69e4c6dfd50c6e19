package dev.redlock.shedlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.admin.LockStatus;
import dev.redlock.admin.RedlockAdmin;
import dev.redlock.config.RedlockConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * What the nodes themselves say of a resource ({@link RedlockAdmin#status}: each node's key read
 * directly, not through any proxy or lock client), for the tests' "locked" and "unlocked" checks.
 */
final class NodesView {
  private final RedlockAdmin admin;

  /** Reads the nodes at {@code uris}: their own ports, never a proxy that a test may freeze. */
  NodesView(List<String> uris) {
    this.admin = RedlockAdmin.create(RedlockConfig.builder().nodes(uris).build());
  }

  LockStatus.Verdict verdict(String resource) {
    return admin.status(resource).verdict();
  }

  /** A quorum of nodes holds {@code resource}'s key for one owner. */
  void assertHeld(String resource) {
    LockStatus status = admin.status(resource);
    assertEquals(LockStatus.Verdict.HELD, status.verdict(), () -> "not held: " + status);
  }

  /** A quorum of voting nodes does not hold {@code resource}'s key: it could be won now. */
  void assertFree(String resource) {
    LockStatus status = admin.status(resource);
    assertEquals(LockStatus.Verdict.FREE, status.verdict(), () -> "not free: " + status);
  }

  /**
   * Checks {@code check} every 50 ms for {@code span} and fails at the first look that sees it
   * false: an invariant over a window (an Awaitility {@code during} would start its window again
   * after a false look).
   */
  static void assertThroughout(Duration span, String what, BooleanSupplier check) {
    long until = System.nanoTime() + span.toNanos();
    do {
      assertTrue(check.getAsBoolean(), what);
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    } while (System.nanoTime() - until < 0);
  }
}
