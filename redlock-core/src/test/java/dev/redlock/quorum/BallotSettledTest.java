package dev.redlock.quorum;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.node.Exchange;
import dev.redlock.node.LockNode;
import dev.redlock.node.NodeRequest;
import dev.redlock.timing.Ticker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A ballot's "settled" futures, which order a lease's next request on each node behind this one
 * ({@link RequestOrder}), and {@link Ballot#whenAllSettled}: made lazily and counted, they must
 * still complete exactly when the node's request has finished, and a skipped node only once the
 * request it followed has. Arithmetic on the ballot alone: no node is asked anything.
 */
class BallotSettledTest {
  private static Ballot ballot(int n) {
    List<LockNode> nodes = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String name = "node" + i;
      nodes.add(
          new LockNode() {
            @Override
            public String name() {
              return name;
            }

            @Override
            public Exchange begin(NodeRequest request) {
              throw new UnsupportedOperationException("a ballot test sends nothing");
            }

            @Override
            public void close() {}
          });
    }
    return new Ballot(
        nodes,
        Ticker.SYSTEM,
        "held",
        new NodeLatencies(n),
        Runnable::run,
        1_000_000_000L,
        new NodeStates(n, 1, java.time.Duration.ofMinutes(1)),
        true);
  }

  @Test
  void aFutureAskedForBeforeItsNodeSettledCompletesWhenItDoes() {
    Ballot ballot = ballot(3);
    CompletableFuture<Void> first = ballot.settled(0);
    assertFalse(first.isDone());
    assertTrue(ballot.settled(0) == first, "asked twice, one future");
    ballot.answer(0, 1, 10);
    assertTrue(first.isDone());
    ballot.fail(1, new RuntimeException("down"), 10);
    assertTrue(ballot.settled(1).isDone(), "asked after it settled: done");
    assertFalse(ballot.settled(2).isDone());
  }

  @Test
  void whenAllSettledRunsOnceTheLastNodeSettlesAndAtOnceAfter() {
    Ballot ballot = ballot(3);
    AtomicInteger before = new AtomicInteger();
    ballot.whenAllSettled(before::incrementAndGet);
    ballot.whenAllSettled(before::incrementAndGet);
    ballot.answer(0, 1, 10);
    ballot.answer(1, 0, 10);
    assertEquals(0, before.get());
    ballot.fail(2, new RuntimeException("down"), 10);
    assertEquals(2, before.get(), "each action once, when the last node settled");
    AtomicInteger after = new AtomicInteger();
    ballot.whenAllSettled(after::incrementAndGet);
    assertEquals(1, after.get(), "every node settled already: at once");
    ballot.failIfOpen(2, new RuntimeException("again")); // recorded already: counts nothing
    assertEquals(2, before.get());
  }

  @Test
  void aSkippedNodeSettlesOnlyWhenTheRequestItFollowsHas() {
    Ballot ballot = ballot(2);
    CompletableFuture<Void> earlier = new CompletableFuture<>();
    AtomicInteger all = new AtomicInteger();
    ballot.whenAllSettled(all::incrementAndGet);
    ballot.skip(0, earlier);
    ballot.answer(1, 1, 10);
    assertFalse(ballot.settled(0).isDone(), "the earlier request there is still in flight");
    assertEquals(0, all.get());
    assertEquals(2, ballot.definite(), "the skip itself is an answer at once");
    earlier.complete(null);
    assertTrue(ballot.settled(0).isDone());
    assertEquals(1, all.get());
  }

  /**
   * A multi-resource lease's first request follows the unsettled release of each of its keys
   * ({@link RequestOrder#RequestOrder(List)}), node by node: on a node it may start only once every
   * one of them has settled there, whether a release's future was made before it settled or it had
   * settled already (the shared completed future); its next request follows it alone.
   */
  @Test
  void aRequestOfSeveralKeysFollowsEveryKeysUnsettledReleaseOnEachNode() {
    Ballot releaseOfA = ballot(2);
    Ballot releaseOfB = ballot(2);
    releaseOfA.answer(1, 1, 10); // A's release has settled on node 1, not on node 0
    RequestOrder order = new RequestOrder(List.of(releaseOfA, releaseOfB));
    Ballot take = ballot(2);
    RequestOrder.Preceding before = order.follow(take);
    CompletableFuture<Void> onNode0 = before.settled(0);
    CompletableFuture<Void> onNode1 = before.settled(1);
    assertFalse(onNode0.isDone(), "neither release has settled on node 0");
    assertFalse(onNode1.isDone(), "B's release has not settled on node 1");
    releaseOfB.answer(1, 1, 10);
    assertTrue(onNode1.isDone(), "both have settled on node 1");
    releaseOfB.fail(0, new RuntimeException("down"), 10);
    assertFalse(onNode0.isDone(), "A's release is still on its way to node 0");
    releaseOfA.answer(0, 0, 10);
    assertTrue(onNode0.isDone());
    assertTrue(before.settled(0).isDone(), "asked after both settled: done at once");
    Ballot extend = ballot(2);
    assertTrue(order.follow(extend) == take, "the next request follows the take alone");
    assertFalse(take.settled(0).isDone());
    take.answer(0, 1, 10);
    assertTrue(take.settled(0).isDone());
  }

  @Test
  void anActionThatThrowsDoesNotStopTheOthers() {
    Ballot ballot = ballot(1);
    AtomicInteger ran = new AtomicInteger();
    ballot.whenAllSettled(
        () -> {
          throw new IllegalStateException("planted");
        });
    ballot.whenAllSettled(ran::incrementAndGet);
    ballot.answer(0, 1, 10);
    assertEquals(1, ran.get());
  }
}
