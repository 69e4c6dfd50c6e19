package dev.redlock.shedlock;

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
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;

/**
 * An application shut down while its {@code @SchedulerLock} job runs: Spring closes the provider
 * before the Redlock, the provider waits for the job to unlock, so no other instance can take the
 * lock while the job still runs (closing the Redlock releases every lease it holds).
 */
class ShutdownIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  static final Duration JOB = Timing.get().scaled(Duration.ofSeconds(3));
  static final CountDownLatch STARTED = new CountDownLatch(1);
  static final AtomicBoolean RUNNING = new AtomicBoolean();

  /** A job that finishes its batch whatever happens: half a payout is worse than a late one. */
  public static class PayoutJob {
    @Scheduled(fixedDelay = 60_000)
    @SchedulerLock(name = "payout", lockAtMostFor = "30s")
    public void payout() {
      RUNNING.set(true);
      STARTED.countDown();
      Timing.sleepThroughInterrupts(JOB); // the scheduler's shutdown interrupts
      RUNNING.set(false);
    }
  }

  @Configuration
  @EnableScheduling
  @EnableSchedulerLock(defaultLockAtMostFor = "30s")
  static class App {
    @Bean
    Redlock redlock() {
      // Spring closes it, after the provider.
      return Redlock.create(redis.config().nodeTimeout(Duration.ofMillis(500)).build());
    }

    @Bean
    LockProvider lockProvider(Redlock redlock) {
      return RedlockLockProvider.create(redlock, "shedlock:");
    }

    @Bean
    PayoutJob job() {
      return new PayoutJob();
    }
  }

  @Test
  void aJobStillRunningAtShutdownKeepsItsLockUntilItEnds() throws Exception {
    AnnotationConfigApplicationContext app = new AnnotationConfigApplicationContext(App.class);
    assertTrue(STARTED.await(Timing.get().noHang().toMillis(), TimeUnit.MILLISECONDS));
    try (Redlock other = redis.client(redis.config().build())) {
      Thread closing = new Thread(app::close, "closing");
      closing.start();
      long deadline = System.nanoTime() + Timing.get().noHang().toNanos();
      while (closing.isAlive()) { // another instance tries all along the shutdown
        assertTrue(System.nanoTime() - deadline < 0, "close() hangs");
        Optional<Lease> taken = other.tryAcquire("shedlock:payout", Duration.ofSeconds(5));
        boolean jobRuns = RUNNING.get();
        taken.ifPresent(Lease::release);
        assertFalse(
            taken.isPresent() && jobRuns, "another instance took the lock of a running job");
        closing.join(50);
      }
      assertFalse(RUNNING.get(), "close() returned while the job ran");
      assertTrue(other.tryAcquire("shedlock:payout", Duration.ofSeconds(5)).isPresent(), "freed");
    }
  }
}
