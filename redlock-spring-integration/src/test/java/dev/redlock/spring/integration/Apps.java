package dev.redlock.spring.integration;

import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.spi.LeaseStore;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The tests' applications: each a real Spring context with its own {@link Redlock} (its own
 * connections, as another JVM would have) over the nodes or the SQL store it is given, and the
 * registry bean, as the README tells an application to declare it; a test adds its own
 * configuration classes.
 */
final class Apps {
  /** Generous for a shared machine: a busy node is slow, not gone. */
  static final Duration NODE_TIMEOUT = Duration.ofMillis(200);

  static final String KEY_PREFIX = "si:";

  private Apps() {}

  /**
   * What one application is: its name, the node URIs it uses (or, if {@code store} is not null, the
   * SQL store instead), its registry's ttl.
   */
  record Instance(
      String name,
      List<String> nodes,
      Function<Duration, ? extends LeaseStore<?>> store,
      Duration ttl) {
    Instance(String name, List<String> nodes, Duration ttl) {
      this(name, nodes, null, ttl);
    }

    RedlockConfig config() {
      return store == null
          ? RedlockConfig.builder().nodes(nodes).nodeTimeout(NODE_TIMEOUT).build()
          // A statement's timeout is whole seconds, at least 1 (JdbcLeases.store).
          : RedlockConfig.builder().store(store).nodeTimeout(Duration.ofSeconds(1)).build();
    }
  }

  /** Starts an application with the registry and {@code configuration}. */
  static AnnotationConfigApplicationContext start(Instance instance, Class<?>... configuration) {
    AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
    context.setId(instance.name());
    context.registerBean(Instance.class, () -> instance);
    context.register(Registry.class);
    if (configuration.length > 0) {
      context.register(configuration);
    }
    context.refresh();
    return context;
  }

  /** The Redlock and the registry, as an application declares them. */
  @Configuration(proxyBeanMethods = false)
  static class Registry {
    @Bean
    Redlock redlock(Instance instance) {
      return Redlock.create(instance.config());
    }

    @Bean
    RedlockLockRegistry lockRegistry(Redlock redlock, Instance instance) {
      return RedlockLockRegistry.builder(redlock, instance.ttl()).keyPrefix(KEY_PREFIX).build();
    }
  }
}
