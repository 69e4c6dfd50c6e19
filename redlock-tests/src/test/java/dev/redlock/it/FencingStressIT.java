package dev.redlock.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.FencedWrites;
import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.History;
import dev.redlock.testkit.History.Op;
import dev.redlock.testkit.History.Outcome;
import dev.redlock.testkit.HistoryChecker;
import dev.redlock.testkit.Nemesis;
import dev.redlock.testkit.OverlapDetector;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Tools;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/**
 * Thousands of acquisitions of one resource by several clients and threads while a seeded {@link
 * Nemesis} freezes, kills and restarts (with AOF) random minorities of the nodes. Every client
 * action goes into a {@link History}; the {@link HistoryChecker} must find no overlapping holders,
 * no stale write accepted, and no lease seen valid after its validity; tokens, in grant order, must
 * strictly increase. {@code -Dredlock.stress.acquisitions=N} and {@code -Dredlock.stress.seed=S}
 * resize or replay a run.
 */
class FencingStressIT {
  static final int ACQUISITIONS = Integer.getInteger("redlock.stress.acquisitions", 5000);
  static final long SEED = Long.getLong("redlock.stress.seed", System.nanoTime());
  static final String RESOURCE = "stress:ledger";

  @Test
  void tokensStrictlyIncreaseAndGuardedWritesHoldUnderMinorityFaults() throws Exception {
    System.out.println(
        "FencingStressIT seed="
            + SEED
            + " acquisitions="
            + ACQUISITIONS
            + " (replay with -Dredlock.stress.seed="
            + SEED
            + ")");
    try (RedisNodes nodes =
            Tools.requireOrSkip(() -> RedisNodes.start(5, RedisBinary.locate(), Persistence.AOF));
        RedisNodes store = RedisNodes.start(1);
        JedisPooled resource = new JedisPooled("127.0.0.1", store.node(0).port())) {
      nodes.all().forEach(Admin::flushAll);
      RedlockConfig config =
          RedlockConfig.builder()
              .nodes(nodes.uris())
              .nodeTimeout(Duration.ofMillis(100))
              .retryDelay(Duration.ofMillis(2))
              .retryJitter(Duration.ofMillis(8))
              .maxTtl(Duration.ofSeconds(5))
              .build();

      History history = new History();
      List<Long> tokensInGrantOrder = new ArrayList<>(ACQUISITIONS);
      OverlapDetector overlaps = new OverlapDetector();
      AtomicInteger granted = new AtomicInteger();
      AtomicInteger unavailable = new AtomicInteger();
      List<String> faults;

      List<Redlock> clients =
          List.of(Redlock.create(config), Redlock.create(config), Redlock.create(config));
      ExecutorService pool = Executors.newFixedThreadPool(6);
      try (Nemesis nemesis = Nemesis.start(nodes, SEED, 2, Persistence.AOF)) {
        List<Future<?>> workers = new ArrayList<>();
        for (int c = 0; c < clients.size(); c++) {
          for (int t = 0; t < 2; t++) {
            Redlock redlock = clients.get(c);
            String holder = "client" + c + "-thread" + t;
            workers.add(
                pool.submit(
                    () -> {
                      while (granted.get() < ACQUISITIONS) {
                        try (Lease lease =
                            redlock.acquire(
                                RESOURCE, Duration.ofSeconds(2), Duration.ofSeconds(30))) {
                          long grantedAt = System.nanoTime();
                          long token = lease.fencingToken();
                          history.record(
                              holder,
                              RESOURCE,
                              Op.GRANT,
                              Outcome.OK,
                              grantedAt,
                              grantedAt + lease.remainingValidity().toNanos(),
                              token);
                          overlaps.enter(RESOURCE, holder);
                          synchronized (tokensInGrantOrder) {
                            tokensInGrantOrder.add(token);
                          }
                          if (lease.isValid()) {
                            history.record(holder, RESOURCE, Op.VALID, Outcome.OK, 0, token);
                          }
                          Outcome write;
                          try {
                            write =
                                FencedWrites.setIfNewer(resource, "guarded", holder, token)
                                    ? Outcome.OK
                                    : Outcome.REFUSED;
                          } catch (RuntimeException e) {
                            write = Outcome.UNKNOWN;
                          }
                          history.record(holder, RESOURCE, Op.WRITE, write, 0, token);
                          granted.incrementAndGet();
                          overlaps.exit(RESOURCE, holder);
                          history.record(holder, RESOURCE, Op.RELEASE, Outcome.OK, 0, token);
                        } catch (LockUnavailableException e) {
                          unavailable.incrementAndGet();
                        }
                      }
                      return null;
                    }));
          }
        }
        for (Future<?> worker : workers) {
          worker.get(10, TimeUnit.MINUTES);
        }
        faults = nemesis.log();
      } finally {
        pool.shutdownNow();
        clients.forEach(Redlock::close);
      }

      List<String> violations = HistoryChecker.violations(history);
      long refusedWrites =
          history.events().stream()
              .filter(e -> e.op() == Op.WRITE && e.outcome() != Outcome.OK)
              .count();
      System.out.printf(
          "FencingStressIT: %d grants, %d gave up after maxWait, %d faults applied, %d events, %d violations%n",
          granted.get(), unavailable.get(), faults.size(), history.size(), violations.size());
      assertEquals(List.of(), violations, "the history checker; seed " + SEED);
      assertEquals(List.of(), overlaps.violations(), "no two holders at once");
      assertEquals(
          0, refusedWrites, "every guarded write accepted: each holder's token was the newest");
      for (int i = 1; i < tokensInGrantOrder.size(); i++) {
        long before = tokensInGrantOrder.get(i - 1);
        long after = tokensInGrantOrder.get(i);
        assertTrue(
            after > before,
            "token #"
                + i
                + " = "
                + after
                + " is not greater than #"
                + (i - 1)
                + " = "
                + before
                + "; seed "
                + SEED);
      }
      assertTrue(tokensInGrantOrder.size() >= ACQUISITIONS);
      assertTrue(faults.size() > 10, "the nemesis really ran: " + faults.size());
    }
  }
}
