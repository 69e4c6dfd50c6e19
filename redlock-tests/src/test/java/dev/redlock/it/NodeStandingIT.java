package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.testkit.CapturedLog;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a client says about nodes that stop voting, on 3 real nodes: when quarantined nodes keep the
 * quorum away, the exception says until when and what lets new nodes vote; each node's change of
 * standing (quarantined, failing, voting again) is logged once, not on every attempt, and never
 * absorbed in silence by a quorum that still forms.
 */
class NodeStandingIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  private static final Duration TTL = Duration.ofSeconds(10);

  @Test
  void quarantinedNodesSayUntilWhenAndWhatLetsThemVoteOnceEach() {
    RedisNode one = redis.nodes().node(1);
    RedisNode two = redis.nodes().node(2);
    one.restart(Persistence.NONE); // the fixture vouches for them again before the next test
    two.restart(Persistence.NONE);
    try (CapturedLog log = new CapturedLog()) {
      Redlock redlock = redis.client(redis.config().build());
      for (int i = 0; i < 5; i++) {
        LockUnavailableException e =
            assertThrows(
                LockUnavailableException.class, () -> redlock.tryAcquire("standing:q", TTL));
        assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
        assertTrue(
            e.getMessage()
                .matches("(?s).*no vote for another \\d+ ms, until \\d\\d:\\d\\d:\\d\\d.*"),
            e.getMessage());
        assertTrue(
            e.getMessage().contains("'redlock init-nodes' lets them vote now"), e.getMessage());
      }
      for (RedisNode node : new RedisNode[] {one, two}) {
        assertEquals(
            1,
            log.lines("node " + node.uri() + " is quarantined by the restart guard").size(),
            "once per node, not per attempt:\n" + log.text());
      }
      assertTrue(log.text().contains("'redlock init-nodes' lets it vote now"), log.text());
    }
  }

  @Test
  void aMinorityNotAnsweringIsLoggedOnceAndItsReturnToo() {
    RedisNode frozen = redis.nodes().node(2);
    try (CapturedLog log = new CapturedLog()) {
      Redlock redlock = redis.client(redis.config().build());
      redlock.tryAcquire("standing:m", TTL).orElseThrow().release(); // every node votes
      frozen.pause(); // the fixture resumes it before the next test
      String failing = "node " + frozen.uri() + " is not voting: ";
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                redlock.tryAcquire("standing:m", TTL).orElseThrow().release(); // 2 of 3 a quorum
                return !log.lines(failing).isEmpty();
              });
      for (int i = 0; i < 5; i++) {
        redlock.tryAcquire("standing:m", TTL).orElseThrow().release();
      }
      assertEquals(1, log.lines(failing).size(), "once, not per attempt:\n" + log.text());
      assertTrue(log.lines(failing).get(0).contains("a lock needs 2 of 3 nodes"), log.text());

      frozen.resume();
      String back = "node " + frozen.uri() + " votes again (it was FAILS)";
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                redlock.tryAcquire("standing:m", TTL).orElseThrow().release();
                return log.lines(back).size() == 1;
              });
      for (int i = 0; i < 3; i++) {
        redlock.tryAcquire("standing:m", TTL).orElseThrow().release();
      }
      assertEquals(1, log.lines(back).size(), log.text());
      assertEquals(1, log.lines(failing).size(), "no second failure:\n" + log.text());
    }
  }
}
