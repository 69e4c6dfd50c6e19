package dev.redlock.spring;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.RedisFixture;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Two Spring Boot applications in one JVM, each with the same {@code @Scheduled @Locked} job firing
 * at the start of every second, over the same three redis-server nodes: each tick runs on exactly
 * one of them. The applications are whole Boot applications (auto-configuration found through the
 * starter's imports file, every other auto-configuration on the class path included).
 */
class TwoInstancesIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  /** Epoch second of each run to the instances that ran it. */
  static final Map<Long, List<String>> RUNS = new ConcurrentHashMap<>();

  /** The job, as an application would write it. */
  public static class SettlementJob {
    @Value("${instance}")
    private String instance;

    // Held 800 ms from the grant: an instance whose tick fires up to that much later is refused,
    // and the lock is free again before the next second.
    @Scheduled(cron = "* * * * * *")
    @Locked(resource = "settlement:tick", ttl = "5s", lockAtLeastFor = "800ms")
    public void settle() {
      RUNS.computeIfAbsent(Instant.now().getEpochSecond(), s -> new CopyOnWriteArrayList<>())
          .add(instance);
    }
  }

  /** One application. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableScheduling
  static class App {
    @Bean
    SettlementJob settlementJob() {
      return new SettlementJob();
    }
  }

  static ConfigurableApplicationContext start(String instance) {
    return new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.NONE)
        .properties(
            "instance=" + instance,
            "redlock.nodes=" + String.join(",", redis.uris()),
            "spring.main.banner-mode=off",
            // the test class path has a JDBC driver and no database for this test
            "spring.autoconfigure.exclude="
                + "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
        .run();
  }

  @Test
  void eachTickRunsOnExactlyOneOfTwoInstances() {
    RUNS.clear();
    try (ConfigurableApplicationContext a = start("a");
        ConfigurableApplicationContext b = start("b")) {
      assertTrue(a.isRunning() && b.isRunning());
      long started = Instant.now().getEpochSecond();
      await()
          .atMost(Duration.ofSeconds(15))
          .until(() -> RUNS.keySet().stream().filter(s -> s > started + 1).count() >= 3);
      // Whole applications: the actuator's health endpoint and Boot's own meter registry see it.
      assertEquals(Status.UP, a.getBean(HealthEndpoint.class).healthForPath("redlock").getStatus());
      for (ConfigurableApplicationContext app : List.of(a, b)) {
        MeterRegistry registry = app.getBean(MeterRegistry.class);
        assertTrue(
            registry.find("redlock.acquire").timers().stream().mapToLong(t -> t.count()).sum() > 0,
            "attempts recorded by " + app.getId());
      }
    }
    Map<Long, List<String>> runs = new TreeMap<>(RUNS);
    long ticksRunTwice = runs.values().stream().filter(r -> r.size() > 1).count();
    assertEquals(0, ticksRunTwice, "ticks run on both instances: " + runs);
    assertTrue(runs.size() >= 3, "ticks: " + runs);
  }
}
