package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * The bookkeeping of {@link Waiters} (its waking is tested on real nodes, WaitersIT): a line lives
 * only while someone waits in it, and a release is spent by a win, kept by one who gives up.
 */
class WaitersTest {
  @Test
  void aLineExistsOnlyWhileSomeoneWaitsInIt() {
    Waiters waiters = new Waiters();
    waiters.released("r"); // nobody waits: nothing is made
    assertEquals(0, waiters.lineCount());
    Waiters.Line line = waiters.join("r");
    assertTrue(waiters.anyWaiting("r"));
    assertTrue(line.isFirst(Thread.currentThread()));
    waiters.leave("r", line, false);
    assertEquals(0, waiters.lineCount());
    assertFalse(waiters.anyWaiting("r"));
    Waiters.Line again = waiters.join("r"); // a left line is never joined again
    assertTrue(again != line);
    waiters.leave("r", again, true);
    assertEquals(0, waiters.lineCount());
  }

  @Test
  void aReleaseIsSpentByAWinAndKeptByOneWhoGivesUp() throws InterruptedException {
    Waiters waiters = new Waiters();
    for (boolean won : new boolean[] {true, false}) {
      Waiters.Line line = waiters.join("r");
      CountDownLatch joined = new CountDownLatch(1);
      CountDownLatch done = new CountDownLatch(1);
      Thread behind =
          new Thread(
              () -> {
                Waiters.Line mine = waiters.join("r");
                joined.countDown();
                try {
                  done.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                waiters.leave("r", mine, false);
              });
      behind.start();
      joined.await();
      assertFalse(line.isFirst(behind));
      waiters.released("r");
      waiters.leave("r", line, won);
      assertTrue(line.isFirst(behind));
      // A win came after that release: spent. A give-up: the next first asks at once.
      assertEquals(!won, line.takeReleased());
      done.countDown();
      behind.join();
      assertEquals(0, waiters.lineCount());
    }
  }
}
