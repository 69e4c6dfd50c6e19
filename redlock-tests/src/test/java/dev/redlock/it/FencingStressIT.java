package dev.redlock.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.FencedWrites;
import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.testkit.OverlapDetector;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Tools;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPooled;

/**
 * Thousands of acquisitions of one resource by several clients and threads while a seeded nemesis
 * freezes, kills and restarts (with AOF) random minorities of the nodes. Tokens, in grant order,
 * must strictly increase; every write guarded by a token must be accepted; no two holders may
 * overlap. {@code -Dredlock.stress.acquisitions=N} and {@code -Dredlock.stress.seed=S} resize or
 * replay a run.
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

      List<Long> tokensInGrantOrder = new ArrayList<>(ACQUISITIONS);
      List<String> violations = new CopyOnWriteArrayList<>();
      OverlapDetector overlaps = new OverlapDetector();
      AtomicInteger granted = new AtomicInteger();
      AtomicInteger unavailable = new AtomicInteger();
      AtomicBoolean done = new AtomicBoolean();
      List<String> faults = new CopyOnWriteArrayList<>();

      List<Redlock> clients =
          List.of(Redlock.create(config), Redlock.create(config), Redlock.create(config));
      ExecutorService pool = Executors.newFixedThreadPool(7);
      try {
        Future<?> nemesis = pool.submit(() -> nemesis(nodes, new Random(SEED), done, faults));
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
                          overlaps.enter(RESOURCE, holder);
                          long token = lease.fencingToken();
                          synchronized (tokensInGrantOrder) {
                            tokensInGrantOrder.add(token);
                          }
                          if (!FencedWrites.setIfNewer(resource, "guarded", holder, token)) {
                            violations.add(
                                "guarded write refused for token " + token + " of " + holder);
                          }
                          granted.incrementAndGet();
                          overlaps.exit(RESOURCE, holder);
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
        done.set(true);
        nemesis.get(1, TimeUnit.MINUTES);
      } finally {
        done.set(true);
        pool.shutdownNow();
        clients.forEach(Redlock::close);
      }

      System.out.printf(
          "FencingStressIT: %d grants, %d gave up after maxWait, %d faults applied%n",
          granted.get(), unavailable.get(), faults.size());
      assertEquals(List.of(), overlaps.violations(), "no two holders at once");
      assertEquals(List.of(), violations, "every guarded write accepted");
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

  /** At most two of five nodes faulty at once; each fault lasts 50–300 ms. */
  private static Void nemesis(RedisNodes nodes, Random random, AtomicBoolean done, List<String> log)
      throws InterruptedException {
    Set<Integer> faulty = new HashSet<>();
    List<long[]> healAt = new ArrayList<>(); // {node, nanoTime}
    while (!done.get()) {
      long now = System.nanoTime();
      for (var it = healAt.iterator(); it.hasNext(); ) {
        long[] entry = it.next();
        if (entry[1] <= now) {
          RedisNode node = nodes.node((int) entry[0]);
          if (node.isPaused()) {
            node.resume();
          }
          faulty.remove((int) entry[0]);
          it.remove();
        }
      }
      if (faulty.size() < 2) {
        int victim = random.nextInt(nodes.size());
        if (faulty.add(victim)) {
          RedisNode node = nodes.node(victim);
          if (random.nextBoolean()) {
            node.pause();
            log.add("pause " + victim);
            healAt.add(
                new long[] {victim, now + TimeUnit.MILLISECONDS.toNanos(50 + random.nextInt(250))});
          } else {
            node.kill();
            node.restart(Persistence.AOF); // back with its data: locks, counters, epoch
            log.add("kill+restart " + victim);
            healAt.add(
                new long[] {victim, now + TimeUnit.MILLISECONDS.toNanos(50 + random.nextInt(250))});
          }
        }
      }
      TimeUnit.MILLISECONDS.sleep(
          20 + random.nextInt(60)); // the fault schedule, not a wait for a result
    }
    healAt.forEach(
        entry -> {
          RedisNode node = nodes.node((int) entry[0]);
          if (node.isPaused()) {
            node.resume();
          }
        });
    return null;
  }
}
