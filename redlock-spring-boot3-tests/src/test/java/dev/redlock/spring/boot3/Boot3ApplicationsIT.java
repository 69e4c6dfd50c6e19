package dev.redlock.spring.boot3;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Redlock;
import dev.redlock.spring.Locked;
import dev.redlock.spring.NodesHealth;
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
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * Two whole Spring Boot 3.5 applications over three real redis-server nodes: the starter's
 * auto-configuration is found, each tick of a {@code @Scheduled @Locked} job runs on one of them,
 * Boot's meter registry records the lock, and the health indicator a Boot 3 application writes in
 * three lines over {@link NodesHealth} is what the health endpoint shows.
 */
class Boot3ApplicationsIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

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

    /** Boot 3's health API: the indicator, over the starter's check (docs/operations.md). */
    @Bean
    HealthIndicator redlockHealthIndicator(Redlock redlock) {
      NodesHealth nodes = new NodesHealth(redlock.config());
      return () -> {
        NodesHealth.Check check = nodes.check();
        return (check.up() ? Health.up() : Health.down()).withDetails(check.details()).build();
      };
    }
  }

  static ConfigurableApplicationContext start(String instance) {
    return new SpringApplicationBuilder(App.class)
        .web(WebApplicationType.NONE)
        .properties(
            "instance=" + instance,
            "redlock.nodes=" + String.join(",", redis.uris()),
            "spring.main.banner-mode=off")
        .run();
  }

  @Test
  void theStarterRunsInSpringBoot35Applications() {
    assertTrue(SpringBootVersion.getVersion().startsWith("3.5."), SpringBootVersion.getVersion());
    RUNS.clear();
    Redlock closed;
    try (ConfigurableApplicationContext a = start("a");
        ConfigurableApplicationContext b = start("b")) {
      closed = a.getBean(Redlock.class);
      long started = Instant.now().getEpochSecond();
      await()
          .atMost(Duration.ofSeconds(15))
          .until(() -> RUNS.keySet().stream().filter(s -> s > started + 1).count() >= 3);
      assertEquals(Status.UP, a.getBean(HealthEndpoint.class).healthForPath("redlock").getStatus());
      for (ConfigurableApplicationContext app : List.of(a, b)) {
        MeterRegistry registry = app.getBean(MeterRegistry.class);
        assertTrue(
            registry.find("redlock.acquire").timers().stream().mapToLong(t -> t.count()).sum() > 0,
            "attempts recorded by " + app.getId());
      }
    }
    Map<Long, List<String>> runs = new TreeMap<>(RUNS);
    assertEquals(0, runs.values().stream().filter(r -> r.size() > 1).count(), "run twice: " + runs);
    assertTrue(runs.size() >= 3, "ticks: " + runs);
    Redlock redlock = closed;
    assertTrue(redlock.toString().contains("closed"), "closed with its context: " + redlock);
  }
}
