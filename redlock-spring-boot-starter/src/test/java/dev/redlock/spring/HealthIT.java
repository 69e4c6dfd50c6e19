package dev.redlock.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.redlock.testkit.RedisFixture;
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

  @Test
  void itCanBeTurnedOff() {
    runner()
        .withPropertyValues("management.health.redlock.enabled=false")
        .run(
            context ->
                assertEquals(0, context.getBeanNamesForType(RedlockHealthIndicator.class).length));
  }
}
