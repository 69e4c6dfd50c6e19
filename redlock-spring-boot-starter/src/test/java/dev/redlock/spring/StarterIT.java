package dev.redlock.spring;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import redis.clients.jedis.Jedis;

/**
 * The starter in real application contexts over three real redis-server nodes: the lock around
 * {@link Locked} methods (SpEL resource, fencing token, renewal, the not-acquired policy, {@code
 * lockAtLeastFor}), metrics, and what closing the context leaves behind. Written against what
 * Spring Boot 3.5 and 4 share: {@code redlock-spring-boot3-tests} runs it on Boot 3.5.
 */
class StarterIT {
  static final Duration NO_HANG = Duration.ofSeconds(10);

  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  static ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class))
        .withPropertyValues("redlock.nodes=" + String.join(",", redis.uris()))
        .withBean(Jobs.class);
  }

  @Test
  void theResourceIsTheSpelExpressionOverTheArgumentsAndIsHeldOnTheNodesWhileTheMethodRuns() {
    runner()
        .run(
            context -> {
              Jobs jobs = context.getBean(Jobs.class);
              AtomicLong holding = new AtomicLong(-1);
              jobs.duringSettle(
                  () -> holding.set(redis.nodesWithKey("redlock:settlement:2026-11-30")));
              assertEquals("settlement:2026-11-30", jobs.settle(LocalDate.of(2026, 11, 30)));
              assertEquals(3, holding.get(), "every node held the evaluated key during the call");
              // A release returns on a quorum; the last node's follows: wait for it, bounded.
              await("released after")
                  .atMost(java.time.Duration.ofSeconds(10))
                  .until(() -> redis.nodesWithKey("redlock:settlement:2026-11-30") == 0);
              assertEquals(1, jobs.settled());
            });
  }

  @Test
  void theFencingTokenReachesTheMethodAndGrowsFromCallToCall() {
    runner()
        .run(
            context -> {
              Jobs jobs = context.getBean(Jobs.class);
              long first = jobs.token("a");
              long second = jobs.token("a");
              assertTrue(first > 0, "a token: " + first);
              assertTrue(second > first, first + " then " + second);
              assertThrows(IllegalStateException.class, CurrentLease::get, "unset outside");
              assertTrue(CurrentLease.find().isEmpty());
            });
  }

  @Test
  void aLockHeldElsewhereThrowsByDefaultAndSkipsWhenAskedOrScheduled() {
    Redlock other = redis.client(redis.config().build());
    runner()
        .run(
            context -> {
              Jobs jobs = context.getBean(Jobs.class);
              try (Lease held = other.acquire("busy", Duration.ofSeconds(10), NO_HANG)) {
                assertTrue(held.isValid());
                LockUnavailableException e =
                    assertThrows(LockUnavailableException.class, jobs::throwsWhenBusy);
                assertEquals(LockUnavailableException.Reason.HELD_ELSEWHERE, e.reason());
                assertNull(jobs.skipsWhenBusy(), "skipped: null, the method did not run");
                jobs.scheduledSkipsWhenBusy(); // @Scheduled: skips by default, never throws
                assertThrows(LockUnavailableException.class, jobs::scheduledButThrows);
                assertEquals(0, jobs.busyRuns(), "no method body ran while held elsewhere");
              }
              assertEquals("ran", jobs.throwsWhenBusy());
              assertEquals("ran", jobs.skipsWhenBusy());
              jobs.scheduledSkipsWhenBusy();
              assertEquals(3, jobs.busyRuns());
            });
  }

  @Test
  void aMethodThatRunsThreeTimesItsTtlKeepsItsLeaseByRenewal() {
    Redlock other = redis.client(redis.config().build());
    runner()
        .run(
            context -> {
              Jobs jobs = context.getBean(Jobs.class);
              Duration held =
                  jobs.outlivesItsTtl(); // checkValid() before each step: throws if lost
              assertTrue(held.toMillis() >= 1200, "ran " + held);
              assertTrue(other.tryAcquire("long", Duration.ofSeconds(1)).isPresent(), "released");
            });
  }

  @Test
  void lockAtLeastForKeepsTheLockAfterAQuickMethodSoASecondInstanceCannotRunUntilItEnds() {
    runner()
        .run(
            first ->
                runner()
                    .run(
                        second -> {
                          Jobs a = first.getBean(Jobs.class);
                          Jobs b = second.getBean(Jobs.class);
                          long called = System.nanoTime();
                          Long token = a.quick();
                          assertTrue(token != null && token > 0, "ran: " + token);
                          assertTrue(redis.nodesWithKey("redlock:quick") >= 2, "held after return");
                          assertNull(b.quick(), "the second instance is refused in the window");
                          await()
                              .atMost(NO_HANG)
                              .pollInterval(Duration.ofMillis(50))
                              .until(() -> b.quick() != null);
                          long waited = (System.nanoTime() - called) / 1_000_000;
                          assertTrue(waited >= 1000, "ran again after " + waited + " ms");
                          assertTrue(waited < 3000, "released at its time, not its ttl: " + waited);
                          assertEquals(1, a.quickRuns());
                          assertEquals(1, b.quickRuns());
                        }));
  }

  @Test
  void metricsAreRecordedWhenTheApplicationHasAMeterRegistry() {
    runner()
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .run(
            context -> {
              MeterRegistry registry = context.getBean(MeterRegistry.class);
              context.getBean(Jobs.class).token("metrics");
              assertEquals(
                  1, registry.get("redlock.acquire").tag("outcome", "acquired").timer().count());
              assertEquals(0.0, registry.get("redlock.leases.held").gauge().value());
              assertEquals(1, context.getBean(Redlock.class).config().listeners().size());
            });
    runner()
        .run(
            context -> assertEquals(0, context.getBean(Redlock.class).config().listeners().size()));
  }

  @Test
  void aTtlTooShortToRenewIsRefusedWithTheCoresMessageAndHoldsNothing() {
    runner()
        .run(
            context -> {
              IllegalArgumentException e =
                  assertThrows(
                      IllegalArgumentException.class, context.getBean(Jobs.class)::tooShortToRenew);
              assertTrue(e.getMessage().startsWith("ttl too short to renew"), e.getMessage());
              await("not held for lockAtLeastFor")
                  .atMost(java.time.Duration.ofSeconds(10))
                  .until(() -> redis.nodesWithKey("redlock:short") == 0);
            });
  }

  @Test
  void anApplicationsOwnRedlockConfigReplacesTheOneReadFromProperties() {
    runner()
        .withPropertyValues("redlock.node-timeout=50ms")
        .withBean(
            RedlockConfig.class, () -> redis.config().nodeTimeout(Duration.ofMillis(77)).build())
        .run(
            context -> {
              Redlock redlock = context.getBean(Redlock.class);
              assertEquals(Duration.ofMillis(77), redlock.config().nodeTimeout());
              assertTrue(context.getBean(Jobs.class).token("own") > 0);
            });
  }

  @Test
  void closingTheContextClosesTheRedlockAndLeavesNoThreadNorConnection() {
    List<Redlock> closed = new ArrayList<>();
    runner()
        .run(
            context -> {
              Redlock redlock = context.getBean(Redlock.class);
              assertEquals(1, context.getBeanNamesForType(Redlock.class).length);
              closed.add(redlock);
              Jobs jobs = context.getBean(Jobs.class);
              jobs.token("close");
              assertTrue(jobs.quick() != null); // its lease waits for lockAtLeastFor at close
              assertTrue(redis.nodesWithKey("redlock:quick") >= 2);
            });
    Redlock redlock = closed.get(0);
    assertThrows(
        IllegalStateException.class, () -> redlock.tryAcquire("after", Duration.ofSeconds(1)));
    await("the waiting lease was released")
        .atMost(java.time.Duration.ofSeconds(10))
        .until(() -> redis.nodesWithKey("redlock:quick") == 0);
    await()
        .atMost(NO_HANG)
        .untilAsserted(
            () -> {
              assertEquals(
                  List.of(),
                  Thread.getAllStackTraces().keySet().stream()
                      .filter(Thread::isAlive)
                      .map(Thread::getName)
                      .filter(name -> name.startsWith("redlock-"))
                      .toList());
              for (RedisNode node : redis.nodes().all()) {
                assertEquals(0, redlockClients(node), "connections left open on " + node);
              }
            });
  }

  static long redlockClients(RedisNode node) {
    try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 2000)) {
      return Arrays.stream(jedis.clientList().split("\n"))
          .filter(line -> line.contains(" name=redlock "))
          .count();
    }
  }
}
