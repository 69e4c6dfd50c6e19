package dev.redlock.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisFixture;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The {@code redlock} health indicator (Spring Boot 4's health API) over three real nodes. */
class HealthIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  static ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                RedlockAutoConfiguration.class, RedlockHealthAutoConfiguration.class))
        .withPropertyValues("redlock.nodes=" + String.join(",", redis.uris()));
  }

  @Test
  void healthIsUpWithEveryNodeAndDownWhenAQuorumCannotBeReached() {
    runner()
        .run(
            context -> {
              RedlockHealthIndicator indicator = context.getBean(RedlockHealthIndicator.class);
              Health up = indicator.health(true);
              assertEquals(Status.UP, up.getStatus(), up.toString());
              assertEquals(3, up.getDetails().get("reachable"), up.toString());
              assertEquals(3, up.getDetails().get("voting"), up.toString());
              @SuppressWarnings("unchecked")
              Map<String, Map<String, Object>> nodes =
                  (Map<String, Map<String, Object>>) up.getDetails().get("nodes");
              assertEquals(3, nodes.size());
              for (Map<String, Object> node : nodes.values()) {
                assertEquals(true, node.get("reachable"), node.toString());
                assertEquals(false, node.get("quarantined"), node.toString());
                assertInstanceOf(Double.class, node.get("roundTripMs"), node.toString());
              }
              redis.nodes().node(1).kill(); // the fixture restarts both before the next test
              Health one = indicator.health(true);
              assertEquals(Status.UP, one.getStatus(), "2 of 3 still make a quorum: " + one);
              redis.nodes().node(2).kill();
              Health down = indicator.health(true);
              assertEquals(Status.DOWN, down.getStatus(), down.toString());
              assertEquals(1, down.getDetails().get("reachable"), down.toString());
              assertEquals(2, down.getDetails().get("quorum"), down.toString());
            });
  }

  /**
   * Nodes restarted without persistence answer but sit out the restart guard's quarantine: a lock
   * cannot be won, so the health is DOWN, however many nodes answer.
   */
  @Test
  void healthIsDownWhenTooFewNodesCanVote() {
    redis.nodes().node(1).restart(Persistence.NONE);
    redis.nodes().node(2).restart(Persistence.NONE);
    runner()
        .run(
            context -> {
              Health health = context.getBean(RedlockHealthIndicator.class).health(true);
              assertEquals(Status.DOWN, health.getStatus(), health.toString());
              assertEquals(3, health.getDetails().get("reachable"), health.toString());
              assertEquals(1, health.getDetails().get("voting"), health.toString());
            });
  }

  /**
   * With two of three nodes frozen the check still answers within its bound, connectTimeout (1 s
   * here), rather than a connectTimeout or two per frozen node, one after the other.
   */
  @Test
  void healthAnswersWithinConnectTimeoutWhenNodesAreFrozen() {
    redis.nodes().node(1).pause(); // the fixture resumes them before the next test
    redis.nodes().node(2).pause();
    runner()
        .withPropertyValues("redlock.connect-timeout=1s")
        .run(
            context -> {
              RedlockHealthIndicator indicator = context.getBean(RedlockHealthIndicator.class);
              long start = System.nanoTime();
              Health health = indicator.health(true);
              Duration took = Duration.ofNanos(System.nanoTime() - start);
              assertEquals(Status.DOWN, health.getStatus(), health.toString());
              assertEquals(1, health.getDetails().get("reachable"), health.toString());
              assertTrue(
                  took.compareTo(Duration.ofMillis(2500)) < 0,
                  "asked at once, bounded by connectTimeout: took " + took);
              assertTrue(
                  health.toString().contains("no answer within connectTimeout (PT1S)"),
                  health.toString());
            });
  }

  @Test
  void itCanBeTurnedOff() {
    runner()
        .withPropertyValues("management.health.redlock.enabled=false")
        .run(
            context ->
                assertEquals(0, context.getBeanNamesForType(RedlockHealthIndicator.class).length));
  }
}
