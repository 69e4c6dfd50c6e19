package dev.redlock.timing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ValidityTest {
  @Test
  void driftIsTtlTimesFactorPlusTwoMilliseconds() {
    assertEquals(Duration.ofMillis(102).toNanos(), Validity.driftNanos(10_000, 0.01));
    assertEquals(Duration.ofMillis(2).toNanos(), Validity.driftNanos(10_000, 0));
    assertEquals(
        2_000_000 + 301_000, Validity.driftNanos(30_100, 0.00001)); // rounds up, never down
  }

  @Test
  void validUntilCountsFromTheStartBeforeTheFirstRequest() {
    long start = 5_000_000_000L;
    assertEquals(
        start + Duration.ofMillis(30_000 - 302).toNanos(),
        Validity.validUntil(start, 30_000, 0.01));
  }

  @Test
  void ttlMustLeaveRoomAfterNodeTimeoutAndDrift() {
    Duration timeout = Duration.ofMillis(50);
    assertEquals(53, Validity.checkTtl(Duration.ofMillis(53), timeout, 0.0)); // 53 > 50 + 2
    assertEquals(
        "ttl must be > nodeTimeout + clock drift (50ms + 2ms), was PT0.052S",
        assertThrows(
                IllegalArgumentException.class,
                () -> Validity.checkTtl(Duration.ofMillis(52), timeout, 0.0))
            .getMessage());
    assertEquals(
        "ttl must be > 0, was PT0S",
        assertThrows(
                IllegalArgumentException.class,
                () -> Validity.checkTtl(Duration.ZERO, timeout, 0.01))
            .getMessage());
  }
}
