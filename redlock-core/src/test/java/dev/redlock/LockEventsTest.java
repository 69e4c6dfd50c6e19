package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.config.RedlockConfig;
import dev.redlock.timing.Ticker;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The listener SPI and the audit trail, over fake nodes. */
class LockEventsTest {
  private static final Duration TTL = Duration.ofSeconds(10);
  private final FakeCluster cluster = new FakeCluster();
  private final List<FakeNode> nodes = cluster.nodes;
  private final List<LockEvent> events = new CopyOnWriteArrayList<>();

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  private Redlock redlock(RedlockListener... listeners) {
    RedlockConfig.Builder config = RedlockConfig.builder().nodeTimeout(Duration.ofMillis(100));
    for (RedlockListener listener : listeners) {
      config.listener(listener);
    }
    return cluster.start(3, config, Ticker.SYSTEM);
  }

  private List<LockEvent.Kind> kinds() {
    return events.stream().map(LockEvent::kind).toList();
  }

  @Test
  void aLeaseLifeIsAttemptAcquiredExtendedReleased() {
    Redlock lock = redlock(events::add);
    Lease lease = lock.tryAcquire("ledger:7", TTL).orElseThrow();
    assertTrue(lease.extend(TTL));
    lease.release();
    assertEquals(
        List.of(
            LockEvent.Kind.ATTEMPT,
            LockEvent.Kind.ACQUIRED,
            LockEvent.Kind.EXTENDED,
            LockEvent.Kind.RELEASED),
        kinds());
    LockEvent acquired = events.get(1);
    assertEquals("ledger:7", acquired.resource());
    assertTrue(acquired.owner().matches("[0-9a-f]{8}"), acquired.owner());
    assertEquals(lease.fencingToken(), acquired.fencingToken());
    assertTrue(acquired.votes() >= 2 && acquired.quorum() == 2);
    assertTrue(acquired.validity().compareTo(Duration.ZERO) > 0);
    assertEquals(3, acquired.nodeOutcomes().size());
    assertEquals(acquired.owner(), events.get(3).owner(), "one owner from grant to release");
  }

  @Test
  void aLostAttemptSaysWhyAndWhatEachNodeAnswered() {
    Redlock lock = redlock(events::add);
    nodes.forEach(n -> n.keys.put("redlock:r", "another-owner"));
    assertTrue(lock.tryAcquire("r", TTL).isEmpty());
    assertEquals(List.of(LockEvent.Kind.ATTEMPT, LockEvent.Kind.FAILED), kinds());
    assertEquals("HELD_ELSEWHERE", events.get(1).reason());
    assertTrue(
        events.get(1).nodeOutcomes().stream()
            .anyMatch(o -> o.status() == NodeOutcome.Status.REFUSED));
  }

  @Test
  void aLossIsAnEvent() {
    Redlock lock = redlock(events::add);
    Lease lease = lock.tryAcquire("r", Duration.ofMillis(600)).orElseThrow().keepAlive();
    nodes.forEach(n -> n.keys.clear());
    Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> kinds().contains(LockEvent.Kind.LOST));
    LockEvent lost =
        events.stream().filter(e -> e.kind() == LockEvent.Kind.LOST).findFirst().orElseThrow();
    assertEquals("RENEWAL_FAILED", lost.reason());
    assertEquals(lease.fencingToken(), lost.fencingToken());
  }

  @Test
  void aThrowingListenerNeverBreaksTheLockOrTheOthers() {
    Redlock lock =
        redlock(
            e -> {
              throw new IllegalStateException("a careless listener");
            },
            events::add);
    Lease lease = lock.tryAcquire("r", TTL).orElseThrow();
    lease.release();
    assertEquals(
        List.of(LockEvent.Kind.ATTEMPT, LockEvent.Kind.ACQUIRED, LockEvent.Kind.RELEASED), kinds());
  }

  @Test
  void theAuditLineNamesEverythingButTheToken() {
    Redlock lock = redlock(events::add);
    Lease lease = lock.tryAcquire("ledger:\"7\"", TTL).orElseThrow();
    String token = nodes.get(0).keys.get("redlock:ledger:\"7\"");
    String line = AuditLog.line(events.get(1));
    assertTrue(
        line.startsWith(
            "event=acquired resource=\"ledger:\\\"7\\\"\" owner="
                + events.get(1).owner()
                + " fence="
                + lease.fencingToken()
                + " valid_ms="),
        line);
    assertTrue(line.contains(" votes="), line);
    assertFalse(line.contains(token), "never the token: " + line);
    assertFalse(events.get(1).toString().contains(token));
  }

  @Test
  void theAuditLogIsOneProperty() {
    Properties p = new Properties();
    p.setProperty("redlock.nodes", "redis://h:1");
    assertEquals(List.of(), RedlockConfig.fromProperties(p).listeners());
    p.setProperty("redlock.auditLog", "true");
    assertEquals(List.of(RedlockListener.auditLog()), RedlockConfig.fromProperties(p).listeners());
    p.setProperty("redlock.auditLog", "yes");
    assertEquals(
        "redlock.auditLog must be true or false, was 'yes'",
        assertThrows(IllegalArgumentException.class, () -> RedlockConfig.fromProperties(p))
            .getMessage());
    assertThrows(NullPointerException.class, () -> RedlockConfig.builder().listener(null));
  }
}
