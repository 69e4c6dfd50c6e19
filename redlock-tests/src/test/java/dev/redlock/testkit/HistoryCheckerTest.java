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

  /** Three permits of a semaphore of 2 at once: caught, naming the three grants. */
  @Test
  void moreHoldersOfASemaphoreThanItsPermitsAreCaught() {
    History h = new History();
    h.declarePermit("s@permit:0", "s", 2);
    h.declarePermit("s@permit:1", "s", 2);
    h.declarePermit("s@permit:2", "s", 2); // a permit the semaphore of 2 must never grant
    h.record("a", "s@permit:0", Op.GRANT, Outcome.OK, 100, 1_000, 1);
    h.record("b", "s@permit:1", Op.GRANT, Outcome.OK, 200, 1_000, 1);
    h.record("c", "s@permit:2", Op.GRANT, Outcome.OK, 300, 1_000, 1);
    List<String> v = HistoryChecker.violations(h);
    assertEquals(1, v.size(), v.toString());
    assertTrue(
        v.get(0).startsWith("more than 2 holders of semaphore 's' at once (3): #1 a GRANT")
            && v.get(0).contains("#3 c GRANT"),
        v.get(0));
    assertEquals(3, HistoryChecker.mostPermitHoldersAtOnce(h, "s"));
  }

  /**
   * Permits whose windows end (released, or run out) before the next begins are not counted
   * together, grants of other resources never are, and the bound is the largest number of permits a
   * permit was taken through (a semaphore grown from 2 to 3 may have 3 holders).
   */
  @Test
  void permitsThatEndedBeforeTheNextAndOtherResourcesAreNotCounted() {
    History h = new History();
    h.declarePermit("s@permit:0", "s", 2);
    h.declarePermit("s@permit:1", "s", 2);
    h.record("a", "s@permit:0", Op.GRANT, Outcome.OK, 100, 1_000, 1);
    h.record("b", "s@permit:1", Op.GRANT, Outcome.OK, 200, 250, 1); // ran out at 250
    h.record("a", "s@permit:0", Op.RELEASE, Outcome.OK, 280, 0, 1);
    h.record("c", "s@permit:1", Op.GRANT, Outcome.OK, 300, 1_000, 2);
    h.record("d", "s@permit:0", Op.GRANT, Outcome.OK, 310, 1_000, 2);
    h.record("e", "other", Op.GRANT, Outcome.OK, 320, 1_000, 1); // no permit of s
    assertEquals(List.of(), HistoryChecker.violations(h));
    assertEquals(2, HistoryChecker.mostPermitHoldersAtOnce(h, "s"));
    h.declarePermit("s@permit:2", "s", 3); // grown: taken through a semaphore of 3
    h.record("f", "s@permit:2", Op.GRANT, Outcome.OK, 330, 1_000, 1);
    assertEquals(List.of(), HistoryChecker.violations(h));
    assertEquals(3, HistoryChecker.mostPermitHoldersAtOnce(h, "s"));
  }

  // ---- read-write locks: writers alone ------------------------------------------------------

  @Test
  void readersMayOverlapAndAWriterAfterThemPasses() {
    History h = new History();
    h.record("a", "rw", Op.READ_GRANT, Outcome.OK, 100, 1_000, 1);
    h.record("b", "rw", Op.READ_GRANT, Outcome.OK, 200, 1_000, 2); // readers share
    h.record("a", "rw", Op.RELEASE, Outcome.OK, 300, 0, 1);
    h.record("b", "rw", Op.RELEASE, Outcome.OK, 400, 0, 2);
    h.record("c", "rw", Op.GRANT, Outcome.OK, 500, 1_500, 3); // the writer, after both
    h.record("c", "rw", Op.RELEASE, Outcome.OK, 600, 0, 3);
    h.record("a", "rw", Op.READ_GRANT, Outcome.OK, 700, 1_700, 4);
    assertEquals(List.of(), HistoryChecker.violations(h));
  }

  @Test
  void aWriterOverlappingAReaderIsCaughtWithBothEvents() {
    History h = new History();
    h.record("a", "rw", Op.READ_GRANT, Outcome.OK, 100, 1_000, 1);
    h.record("b", "rw", Op.GRANT, Outcome.OK, 500, 1_500, 2); // the reader still valid
    List<String> v = HistoryChecker.violations(h);
    assertEquals(1, v.size(), v.toString());
    assertTrue(
        v.get(0).startsWith("writer not alone: #2 b GRANT") && v.get(0).contains("#1 a READ_GRANT"),
        v.get(0));
  }

  @Test
  void aReaderComingInWhileAWriterHoldsIsCaught() {
    History h = new History();
    h.record("a", "rw", Op.GRANT, Outcome.OK, 100, 1_000, 5);
    h.record("b", "rw", Op.READ_GRANT, Outcome.OK, 500, 1_500, 6);
    List<String> v = HistoryChecker.violations(h);
    assertEquals(1, v.size(), v.toString());
    assertTrue(v.get(0).startsWith("writer not alone: #1 a GRANT"), v.get(0));
  }

  @Test
  void tokensOutOfOrderBetweenReadsAndWritesAreCaught() {
    History h = new History();
    h.record("a", "rw", Op.READ_GRANT, Outcome.OK, 100, 400, 7); // expired at 400
    h.record("b", "rw", Op.GRANT, Outcome.OK, 500, 800, 6); // after it, with a smaller token
    h.record("c", "rw", Op.READ_GRANT, Outcome.OK, 900, 1_200, 5); // after the write, smaller
    List<String> v = HistoryChecker.violations(h);
    assertEquals(2, v.size(), v.toString());
    assertTrue(v.get(0).startsWith("write token not above an earlier read's: #1 a"), v.get(0));
    assertTrue(v.get(1).startsWith("read token not above an earlier write's: #2 b"), v.get(1));
  }

  @Test
  void aPlainLockOfTheSameNameIsNotJudgedWithTheReaders() {
    History h = new History();
    h.record("a", "rw", Op.READ_GRANT, Outcome.OK, 100, 1_000, 1);
    h.record("b", "other", Op.GRANT, Outcome.OK, 200, 1_000, 2);
    assertEquals(List.of(), HistoryChecker.violations(h));
  }
}
