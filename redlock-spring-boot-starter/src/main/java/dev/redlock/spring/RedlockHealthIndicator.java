package dev.redlock.spring;

import dev.redlock.Redlock;
import java.util.Objects;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code redlock} health of an application (Spring Boot 4's health API): per node, whether it
 * answers, its round trip, and how long the restart guard keeps it out of votes; DOWN when fewer
 * than a quorum of nodes can vote. It answers within {@code connectTimeout}. See {@link
 * NodesHealth}.
 */
public class RedlockHealthIndicator extends AbstractHealthIndicator {
  private final NodesHealth nodes;

  /**
   * A health indicator over {@code redlock}'s nodes.
   *
   * @throws NullPointerException if {@code redlock} is null
   */
  public RedlockHealthIndicator(Redlock redlock) {
    super("Redlock health check failed");
    this.nodes =
        new NodesHealth(Objects.requireNonNull(redlock, "redlock must not be null").config());
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    NodesHealth.Check check = nodes.check();
    (check.up() ? builder.up() : builder.down()).withDetails(check.details());
  }
}
