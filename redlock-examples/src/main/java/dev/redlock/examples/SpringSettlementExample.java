package dev.redlock.examples;

import dev.redlock.spring.CurrentLease;
import dev.redlock.spring.Locked;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisNodes;
import java.io.PrintStream;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * A Spring Boot application with a scheduled settlement job, run as two instances (as on two
 * servers) over three local redis-server nodes: the job fires on both at the start of every second,
 * and {@link Locked} lets one of them settle the tick's batch. The ledger (here a map standing for
 * the database) takes a batch only with a fencing token larger than the last it saw. At the end the
 * program checks that no batch was settled twice.
 *
 * <p>The whole wiring is the starter's: {@code redlock.nodes} in the properties, {@code @Locked} on
 * the method. Run: {@code ./mvnw -q install -DskipTests && ./mvnw -q -pl redlock-examples exec:java
 * -Dexec.mainClass=dev.redlock.examples.SpringSettlementExample}
 */
public final class SpringSettlementExample {
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

  /** The shared ledger: batch (the tick's second) to who settled it, and the last token seen. */
  static final class Ledger {
    private final Map<Long, List<String>> batches = new ConcurrentHashMap<>();
    private final CountDownLatch ticks;
    private final PrintStream out;
    private long lastToken;

    Ledger(int ticks, PrintStream out) {
      this.ticks = new CountDownLatch(ticks);
      this.out = out;
    }

    synchronized void settle(long batch, String instance, long token) {
      if (token <= lastToken) {
        out.println("  ledger refused " + instance + "'s stale token " + token);
        return;
      }
      lastToken = token;
      batches.computeIfAbsent(batch, b -> new ArrayList<>()).add(instance);
      out.println(
          LocalTime.now().format(CLOCK)
              + " batch "
              + batch % 1000
              + " settled by instance "
              + instance
              + " (fencing token "
              + token
              + ")");
      ticks.countDown();
    }
  }

  /** The job, as an application writes it. */
  public static class SettlementJob {
    private final Ledger ledger;

    @Value("${instance}")
    private String instance;

    SettlementJob(Ledger ledger) {
      this.ledger = ledger;
    }

    /** Every second on every instance; one of them holds the lock and settles. */
    // Held 800 ms from the grant: an instance whose tick fires up to that much later is refused,
    // and the lock is free again before the next second.
    @Scheduled(cron = "* * * * * *")
    @Locked(resource = "settlement:batch", ttl = "10s", lockAtLeastFor = "800ms")
    public void settle() {
      long batch = System.currentTimeMillis() / 1000;
      ledger.settle(batch, instance, CurrentLease.fencingToken());
    }
  }

  /** The application. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  @EnableScheduling
  static class SettlementApplication {
    @Bean
    SettlementJob settlementJob(Ledger ledger) {
      return new SettlementJob(ledger);
    }
  }

  private final PrintStream out;

  SpringSettlementExample(PrintStream out) {
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    System.exit(new SpringSettlementExample(System.out).run(4) ? 0 : 1);
  }

  /** Runs two instances until {@code ticks} batches are settled; whether none was settled twice. */
  boolean run(int ticks) throws Exception {
    try (RedisNodes nodes = RedisNodes.start(3)) {
      NodeData.vouchForNewNodes(nodes); // new nodes never held a lock: no restart-guard wait
      out.println("launched 3 local redis-server nodes: " + nodes.uris());
      Ledger ledger = new Ledger(ticks, out);
      try (ConfigurableApplicationContext a = start("a", nodes.uris(), ledger);
          ConfigurableApplicationContext b = start("b", nodes.uris(), ledger)) {
        out.println("two instances started: " + a.getId() + ", " + b.getId());
        if (!ledger.ticks.await(Duration.ofSeconds(30).toSeconds(), TimeUnit.SECONDS)) {
          out.println("CHECK FAILED: only " + ledger.batches.size() + " batches in 30 s");
          return false;
        }
      }
      long twice = ledger.batches.values().stream().filter(who -> who.size() > 1).count();
      if (twice > 0) {
        out.println("CHECK FAILED: batches settled twice: " + ledger.batches);
        return false;
      }
      out.println("CHECK PASSED: " + ledger.batches.size() + " batches, each settled once");
      return true;
    }
  }

  private static ConfigurableApplicationContext start(
      String instance, List<String> nodes, Ledger ledger) {
    return new SpringApplicationBuilder(SettlementApplication.class)
        .web(WebApplicationType.NONE)
        .initializers(context -> context.getBeanFactory().registerSingleton("ledger", ledger))
        .properties(
            "instance=" + instance,
            "spring.application.name=settlement-" + instance,
            "spring.main.banner-mode=off",
            "spring.main.log-startup-info=false",
            "redlock.nodes=" + String.join(",", nodes))
        .run();
  }
}
