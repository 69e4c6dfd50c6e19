package dev.redlock.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.History.Op;
import dev.redlock.testkit.History.Outcome;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checker must be able to see each violation it claims to catch, and pass a safe history. */
class HistoryCheckerTest {
  @Test
  void aSafeHistoryPasses() {
    History h = new History();
    h.record("a", "r", Op.GRANT, Outcome.OK, 100, 1_000, 1);
    h.record("a", "r", Op.VALID, Outcome.OK, 200, 0, 1);
    h.record("a", "r", Op.WRITE, Outcome.OK, 300, 0, 1);
    h.record("a", "r", Op.RELEASE, Outcome.OK, 400, 0, 1);
    h.record("b", "r", Op.GRANT, Outcome.OK, 500, 1_500, 2);
    h.record("b", "r", Op.WRITE, Outcome.OK, 600, 0, 2);
    h.record("a", "r", Op.WRITE, Outcome.REFUSED, 700, 0, 1); // a stale write, refused: fine
    assertEquals(List.of(), HistoryChecker.violations(h));
  }

  @Test
  void overlappingHoldersAreCaughtWithBothEvents() {
    History h = new History();
    h.record("a", "r", Op.GRANT, Outcome.OK, 100, 1_000, 1);
    h.record("b", "r", Op.GRANT, Outcome.OK, 500, 1_500, 2); // a still valid, never released
    List<String> v = HistoryChecker.violations(h);
    assertEquals(1, v.size(), v.toString());
    assertTrue(
        v.get(0).startsWith("overlapping holders: #1 a GRANT") && v.get(0).contains("#2 b GRANT"),
        v.get(0));
  }

  @Test
  void aHolderWhoseLeaseExpiredDoesNotOverlapTheNext() {
    History h = new History();
    h.record("a", "r", Op.GRANT, Outcome.OK, 100, 400, 1); // expired at 400, never released
    h.record("b", "r", Op.GRANT, Outcome.OK, 500, 1_500, 2);
    assertEquals(List.of(), HistoryChecker.violations(h));
  }

  @Test
  void aStaleWriteAcceptedIsCaught() {
    History h = new History();
    h.record("b", "r", Op.WRITE, Outcome.OK, 600, 0, 2);
    h.record("a", "r", Op.WRITE, Outcome.UNKNOWN, 700, 0, 1); // unknown counts as accepted
    List<String> v = HistoryChecker.violations(h);
    assertEquals(1, v.size(), v.toString());
    assertTrue(v.get(0).startsWith("stale write accepted: #2 a WRITE UNKNOWN"), v.get(0));
  }

  @Test
  void aLeaseFoundValidAfterItsValidityIsCaught() {
    History h = new History();
    h.record("a", "r", Op.GRANT, Outcome.OK, 100, 1_000, 1);
    h.record("a", "r", Op.VALID, Outcome.OK, 1_001, 0, 1);
    List<String> v = HistoryChecker.violations(h);
    assertEquals(1, v.size(), v.toString());
    assertTrue(v.get(0).startsWith("lease reported valid after its validity ended"), v.get(0));
  }

  @Test
  void aTokenThatDoesNotIncreaseIsCaught() {
    History h = new History();
    h.record("a", "r", Op.GRANT, Outcome.OK, 100, 400, 7); // expired at 400
    h.record("b", "r", Op.GRANT, Outcome.OK, 500, 1_500, 7); // same token, later grant
    List<String> v = HistoryChecker.violations(h);
    assertEquals(1, v.size(), v.toString());
    assertTrue(v.get(0).startsWith("fencing token did not increase: #1 a GRANT"), v.get(0));
  }
}
