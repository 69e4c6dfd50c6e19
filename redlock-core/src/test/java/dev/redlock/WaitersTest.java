package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.spi.LeaseStore;
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
    waiters.released("r", 0, false); // nobody waits: nothing is made
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
      waiters.released("r", 0, false);
      waiters.leave("r", line, won);
      assertTrue(line.isFirst(behind));
      // A win came after that release: spent. A give-up: the next first asks at once.
      assertEquals(!won, line.takeReleased());
      done.countDown();
      behind.join();
      assertEquals(0, waiters.lineCount());
    }
  }

  /**
   * A release told by the nodes wakes the first once a quorum told of the same lease, and a line
   * asks the store for notices once while it lives; this service's own release is not news.
   */
  @Test
  void noticesWakeTheFirstAtAQuorumOfNodesAndOwnReleasesAreNotNews() {
    java.util.List<String> asked = new java.util.ArrayList<>();
    Waiters waiters =
        new Waiters(
            new Waiters.Watcher() {
              @Override
              public void watch(String resource, LeaseStore.Releases to) {
                asked.add("watch " + resource);
              }

              @Override
              public void unwatch(String resource) {
                asked.add("unwatch " + resource);
              }
            },
            2);
    waiters.noticed("r", 0, 7); // no line: nothing happens, nothing is made
    assertEquals(0, waiters.lineCount());
    Waiters.Line line = waiters.join("r");
    Waiters.Line set = waiters.join(java.util.List.of("a", "b")); // sets are not watched
    assertEquals(java.util.List.of("watch r"), asked);
    waiters.noticed("r", 0, 7);
    waiters.noticed("r", 0, 7); // the same node twice is one node
    assertFalse(line.takeReleased(), "one node of a quorum of two");
    waiters.noticed("r", 1, 8); // another lease's release: counted afresh
    assertFalse(line.takeReleased());
    waiters.noticed("r", 2, 8);
    assertTrue(line.takeReleased(), "two nodes told of lease 8");
    waiters.noticed("r", 0, 8); // a third node: told already
    assertFalse(line.takeReleased());
    waiters.released("r", 9, false); // this service released lease 9: woken at once
    assertTrue(line.takeReleased());
    waiters.noticed("r", 0, 9);
    waiters.noticed("r", 1, 9);
    assertFalse(line.takeReleased(), "the nodes' word on our own release is not news");
    waiters.releasing("r", 11); // about to release lease 11: the nodes may tell before it returns
    waiters.noticed("r", 0, 11);
    waiters.noticed("r", 1, 11);
    assertFalse(line.takeReleased(), "notices of a release being sent are not news either");
    waiters.released("r", 10, true); // other clients wait: the lock is theirs, ours is not woken
    assertFalse(line.takeReleased());
    waiters.noticed("r", 0, 10);
    waiters.noticed("r", 1, 10);
    assertFalse(line.takeReleased(), "nor by the nodes' word on it");
    waiters.leave("r", line, false);
    waiters.leave(java.util.List.of("a", "b"), set, false);
    assertEquals(java.util.List.of("watch r", "unwatch r"), asked);
  }
}
