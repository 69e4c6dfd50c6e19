package dev.redlock.spring;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.Timing;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * A Boot application shut down while one {@code @Locked} job runs and another, finished, holds its
 * lock for {@code lockAtLeastFor}: another instance, trying both locks all along the shutdown, wins
 * neither before the job ends and the {@code lockAtLeastFor} has passed. The jobs run on threads of
 * the application's own (a message listener's, a plain executor's), which Spring's shutdown does
 * not wait for, as it waits for its scheduler's tasks.
 */
class ShutdownIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  static final Timing TIMING = Timing.get();
  static final Duration JOB = TIMING.scaled(Duration.ofSeconds(4)); // outlasts AT_LEAST
  static final Duration AT_LEAST = TIMING.scaled(Duration.ofSeconds(2));
  static final Duration MARGIN = TIMING.scaled(Duration.ofMillis(200));
  static final CountDownLatch STARTED = new CountDownLatch(2);
  static final AtomicBoolean RUNNING = new AtomicBoolean();
  static final AtomicLong REPORTED_AT = new AtomicLong();

  /** Jobs that finish their batch whatever happens: half a payout is worse than a late one. */
  public static class Jobs {
    @Locked(resource = "payout", ttl = "10s")
    public void payout() {
      RUNNING.set(true);
      STARTED.countDown();
      Timing.sleepThroughInterrupts(JOB); // a loss would interrupt
      RUNNING.set(false);
    }

    @Locked(resource = "report", ttl = "10s", lockAtLeastFor = "${at-least}")
    public void report() {
      REPORTED_AT.set(System.nanoTime()); // after the grant: held at least until AT_LEAST after
      STARTED.countDown();
    }
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    Jobs jobs() {
      return new Jobs();
    }
  }

  @Test
  void noOtherInstanceWinsARunningJobsLockOrALockAtLeastForThroughAShutdown() throws Exception {
    ConfigurableApplicationContext app =
        new SpringApplicationBuilder(App.class)
            .web(WebApplicationType.NONE)
            .properties(
                "redlock.nodes=" + String.join(",", redis.uris()),
                "at-least=" + AT_LEAST.toMillis() + "ms",
                "spring.main.banner-mode=off",
                "spring.autoconfigure.exclude="
                    + "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
            .run();
    Jobs jobs = app.getBean(Jobs.class);
    Thread listener = new Thread(jobs::payout, "listener");
    listener.start();
    jobs.report();
    assertTrue(STARTED.await(TIMING.noHang().toMillis(), TimeUnit.MILLISECONDS));
    try (Redlock other = redis.client(redis.config().build())) {
      Thread closing = new Thread(app::close, "closing");
      closing.start();
      long deadline = System.nanoTime() + TIMING.noHang().toNanos();
      while (closing.isAlive()) {
        assertTrue(System.nanoTime() - deadline < 0, "the shutdown hangs");
        Optional<Lease> payout = other.tryAcquire("payout", Duration.ofSeconds(5));
        boolean jobRuns = RUNNING.get();
        payout.ifPresent(Lease::release);
        assertFalse(payout.isPresent() && jobRuns, "another instance won a running job's lock");
        // The lock is held AT_LEAST from its grant, a little before the method's first line: the
        // margin keeps that gap from reading as an early release, and catches a cut at shutdown.
        long atLeastUntil = REPORTED_AT.get() + AT_LEAST.toNanos() - MARGIN.toNanos();
        Optional<Lease> report = other.tryAcquire("report", Duration.ofSeconds(5));
        boolean early = System.nanoTime() - atLeastUntil < 0;
        report.ifPresent(Lease::release);
        assertFalse(report.isPresent() && early, "another instance won within lockAtLeastFor");
        closing.join(20);
      }
      assertFalse(RUNNING.get(), "the shutdown ended while the job ran");
      assertTrue(other.tryAcquire("payout", Duration.ofSeconds(5)).isPresent(), "freed after");
      assertTrue(other.tryAcquire("report", Duration.ofSeconds(5)).isPresent(), "freed after");
    }
  }
}
