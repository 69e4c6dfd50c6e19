package dev.redlock.spring;

import dev.redlock.Redlock;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The {@code redlock} health indicator ({@link RedlockHealthIndicator}) when the application has
 * Spring Boot 4's health support and a {@link Redlock} over Redis nodes ({@code
 * redlock.store=redis}, the default: a store's Redlock has no nodes to check); {@code
 * management.health.redlock.enabled=false} turns it off.
 */
@AutoConfiguration(after = RedlockAutoConfiguration.class)
@ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
@ConditionalOnBean(Redlock.class)
@ConditionalOnProperty(
    prefix = "redlock",
    name = "store",
    havingValue = "redis",
    matchIfMissing = true)
@ConditionalOnEnabledHealthIndicator("redlock")
public class RedlockHealthAutoConfiguration {

  /** Creates the auto-configuration; Spring calls it. */
  public RedlockHealthAutoConfiguration() {}

  /** The indicator, unless the application has its own of that name. */
  @Bean
  @ConditionalOnMissingBean(name = "redlockHealthIndicator")
  public RedlockHealthIndicator redlockHealthIndicator(Redlock redlock) {
    return new RedlockHealthIndicator(redlock);
  }
}
