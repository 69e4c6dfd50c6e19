package dev.redlock.shedlock;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.LockEvent;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.RedisFixture;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Three Spring application contexts in one JVM, three instances of one application: the same
 * {@code @Scheduled @SchedulerLock} job (shedlock-spring's {@code @EnableSchedulerLock}) firing
 * every 2 seconds on each, each instance with its own Redlock and {@link RedlockLockProvider} over
 * the same three redis-server nodes, on links of its own. Instances a and c fire at the same
 * instant and race for the nodes; b's clock is {@link #LATE_BY} behind, so it fires after the
 * winner's run has ended and only {@code lockAtLeastFor} keeps it out. Every run is recorded with
 * its tick (the 2-second slot it fired in), its fencing token (read by the job from {@link
 * CurrentLock}) and its start and end: no tick runs twice and no two runs overlap, with every node
 * up and while one is frozen.
 */
@ExtendWith(NoLockLeft.class)
class SchedulerInstancesIT {
  static final Duration TICK = Duration.ofSeconds(2);

  /**
   * How far instance b's clock is behind the others': b fires each tick that much later, after the
   * tick's run has ended (as a machine whose clock lags would).
   */
  static final Duration LATE_BY = Duration.ofMillis(300);

  @RegisterExtension
  static final RedisFixture redis = RedisFixture.perClassBehindProxies(RedisFixture.nodes(3));

  static final List<Run> RUNS = new CopyOnWriteArrayList<>();

  /** Lock attempts by instance (the Redlock's events): each fires every tick. */
  static final Map<String, Integer> ATTEMPTS = new ConcurrentHashMap<>();

  /** One run of the job. */
  record Run(String instance, long tick, long token, long start, long end) {}

  /** The job, as an application writes it. */
  public static class SettlementJob {
    private final String instance;

    SettlementJob(String instance) {
      this.instance = instance;
    }

    // Held at least 1 s from the grant: the other instance's tick, fired up to LATE_BY later,
    // finds it held; free again well before the next tick.
    @Scheduled(cron = "*/2 * * * * *")
    @SchedulerLock(name = "settlement", lockAtMostFor = "10s", lockAtLeastFor = "1s")
    public void settle() throws InterruptedException {
      long start = System.nanoTime();
      long tick = System.currentTimeMillis() / TICK.toMillis(); // the slot it fired in
      LockAssert.assertLocked();
      long token = CurrentLock.fencingToken();
      Thread.sleep(100); // the work: a second run at the same time would overlap it
      RUNS.add(new Run(instance, tick, token, start, System.nanoTime()));
    }
  }

  /** One instance of the application. */
  @Configuration
  @EnableScheduling
  @EnableSchedulerLock(defaultLockAtMostFor = "10s")
  static class Instance {
    @Bean
    Redlock redlock(Environment env) {
      return Redlock.create(
          RedlockConfig.builder()
              .nodes(List.of(env.getRequiredProperty("nodes").split(",")))
              .nodeTimeout(Duration.ofMillis(500))
              .listener(
                  event -> {
                    if (event.kind() == LockEvent.Kind.ATTEMPT) {
                      ATTEMPTS.merge(env.getRequiredProperty("instance"), 1, Integer::sum);
                    }
                  })
              .build());
    }

    /** The instance's scheduler, on a clock {@code lateBy} behind: it fires that much later. */
    @Bean
    ThreadPoolTaskScheduler taskScheduler(Environment env) {
      ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
      Duration lateBy = Duration.ofMillis(Long.parseLong(env.getRequiredProperty("lateByMillis")));
      scheduler.setClock(Clock.offset(Clock.systemDefaultZone(), lateBy.negated()));
      return scheduler;
    }

    @Bean
    LockProvider lockProvider(Redlock redlock) {
      return RedlockLockProvider.create(redlock, "shedlock:");
    }

    @Bean
    SettlementJob settlementJob(Environment env) {
      return new SettlementJob(env.getRequiredProperty("instance"));
    }
  }

  static AnnotationConfigApplicationContext start(
      FaultyNodes nodes, String instance, Duration lateBy) {
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context
        .getEnvironment()
        .getPropertySources()
        .addFirst(
            new MapPropertySource(
                "instance",
                Map.of(
                    "instance",
                    instance,
                    "nodes",
                    String.join(",", nodes.uris(instance)),
                    "lateByMillis",
                    String.valueOf(lateBy.toMillis()))));
    context.register(Instance.class);
    context.refresh();
    return context;
  }

  @Test
  void eachTickRunsOnceOnOneOfThreeInstancesAlsoWithANodeFrozen() {
    FaultyNodes nodes = redis.faultyNodes();
    RUNS.clear();
    ATTEMPTS.clear();
    long healthyFrom;
    long frozenFrom;
    try (AnnotationConfigApplicationContext a = start(nodes, "a", Duration.ZERO);
        AnnotationConfigApplicationContext b = start(nodes, "b", LATE_BY);
        AnnotationConfigApplicationContext c = start(nodes, "c", Duration.ZERO)) {
      assertTrue(a.isRunning() && b.isRunning() && c.isRunning());
      healthyFrom = System.currentTimeMillis() / TICK.toMillis() + 1; // every instance up
      await("4 ticks with every node up")
          .atMost(Duration.ofSeconds(30))
          .until(() -> ticksFrom(healthyFrom) >= 4);
      nodes.freezeLink(0);
      frozenFrom = System.currentTimeMillis() / TICK.toMillis() + 1;
      await("2 ticks with node 0 frozen")
          .atMost(Duration.ofSeconds(40))
          .until(() -> ticksFrom(frozenFrom) >= 2);
    }
    List<Run> runs = new ArrayList<>(RUNS);
    System.out.println(
        +healthyFrom
            + " frozenFrom="
            + frozenFrom
            + " ticks="
            + runs.stream().map(r -> r.tick() + r.instance()).toList()
            + " attempts="
            + ATTEMPTS);
    Map<Long, List<String>> byTick =
        new TreeMap<>(
            runs.stream()
                .collect(
                    Collectors.groupingBy(
                        Run::tick, Collectors.mapping(Run::instance, Collectors.toList()))));
    assertTrue(
        byTick.values().stream().allMatch(instances -> instances.size() == 1),
        "a tick ran more than once: " + byTick);
    // Every node up: every tick ran (exactly once). With a node frozen, a and c can split the two
    // nodes left and neither runs that tick (the core's quorum-unreachable error, logged by the
    // scheduler; b, 300 ms late, finds both nodes still taken): at most once is asserted there.
    // Measured: 1 to 7 of 5 to 11 such ticks skipped.
    for (long tick = healthyFrom; tick < frozenFrom - 1; tick++) {
      assertTrue(byTick.containsKey(tick), "tick " + tick + " did not run: " + byTick);
    }
    runs.sort(Comparator.comparingLong(Run::start));
    for (int i = 1; i < runs.size(); i++) {
      Run before = runs.get(i - 1);
      Run after = runs.get(i);
      assertTrue(before.end() < after.start(), "overlapping runs: " + before + ", " + after);
      assertTrue(before.token() < after.token(), "tokens not growing: " + before + ", " + after);
    }
    for (String instance : List.of("a", "b", "c")) { // each fired every tick and contended for it
      assertTrue(ATTEMPTS.getOrDefault(instance, 0) >= 6, "attempts: " + ATTEMPTS);
    }
  }

  private static long ticksFrom(long first) {
    return RUNS.stream().filter(r -> r.tick() >= first).map(Run::tick).distinct().count();
  }
}
