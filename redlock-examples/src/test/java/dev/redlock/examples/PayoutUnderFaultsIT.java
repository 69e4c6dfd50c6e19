package dev.redlock.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.History;
import dev.redlock.testkit.HistoryChecker;
import dev.redlock.testkit.Nemesis;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisFixture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * How a user tests their own critical section with the fault kit ({@code
 * dev.redlock:redlock-tests}, test scope): real nodes behind fault proxies from a {@link
 * RedisFixture}, a seeded {@link Nemesis} freezing, killing and cutting off nodes, and the {@link
 * HistoryChecker} judging what the workers did. The code under test here is a payout that must
 * never run twice at once.
 */
class PayoutUnderFaultsIT {
  /** Five nodes behind proxies; killed nodes come back with their data (AOF). */
  @RegisterExtension
  static final RedisFixture redis =
      RedisFixture.perClassBehindProxies(RedisFixture.nodes(5).persistence(Persistence.AOF));

  private final AtomicInteger payingNow = new AtomicInteger();
  private final AtomicInteger paid = new AtomicInteger();

  /** The user's code: pays one batch; two at once would pay twice. */
  private void payBatch() {
    if (payingNow.incrementAndGet() != 1) {
      throw new AssertionError("two payouts at once");
    }
    paid.incrementAndGet();
    payingNow.decrementAndGet();
  }

  @Test
  void payoutsNeverOverlapWhileAMinorityOfNodesMisbehaves() throws Exception {
    FaultyNodes nodes = redis.faultyNodes();
    History history = new History();
    // Killed nodes come back from an AOF fsynced on every write: trusted, they keep their vote.
    // With
    // the default (every restart sits out maxTtl), restarts a minority at a time pile up into a
    // quarantined majority and the service pauses, which is safe but not what this test is about;
    // a short maxTtl bounds such pauses too.
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes(nodes.uris())
            .nodeTimeout(Duration.ofMillis(100))
            .restartGuard(RestartGuard.TRUST_FSYNCED_AOF_RESTARTS)
            .maxTtl(Duration.ofSeconds(5))
            .build();
    ExecutorService workers = Executors.newFixedThreadPool(2);
    try (Redlock redlock = Redlock.create(config);
        Nemesis nemesis = Nemesis.builder(nodes).seed(42).maxFaulty(2).start()) {
      List<Future<?>> running = new java.util.ArrayList<>();
      for (int w = 0; w < 2; w++) {
        String worker = "worker-" + w;
        running.add(
            workers.submit(
                () -> {
                  for (int i = 0; i < 50; i++) {
                    redlock.withLock(
                        "payout:batch",
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(30),
                        lease -> {
                          history.granted(worker, lease);
                          payBatch();
                          history.released(worker, lease);
                          return null;
                        });
                  }
                  return null;
                }));
      }
      for (Future<?> f : running) {
        f.get(5, TimeUnit.MINUTES);
      }
      assertTrue(nemesis.applied() > 0, "seed " + nemesis.seed() + " applied no fault");
    } finally {
      workers.shutdownNow();
    }
    assertEquals(List.of(), HistoryChecker.violations(history));
    assertEquals(100, paid.get());
    assertTrue(history.size() >= 200);
  }
}
