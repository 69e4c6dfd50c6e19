package dev.redlock.spring;

import dev.redlock.LockService;
import dev.redlock.LockSettings;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.RedlockListener;
import dev.redlock.jdbc.JdbcLeases;
import dev.redlock.micrometer.RedlockMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Makes the application's lock service from {@code redlock.*} properties ({@link
 * RedlockProperties}), closed with the context: a {@link Redlock} over {@code redlock.nodes}, or
 * with {@code redlock.store=jdbc} leases in a table of the application's {@code DataSource}; and
 * puts the lock around {@link Locked} methods.
 *
 * <p>Each part steps aside for the application's own: a {@link RedlockConfig} bean (for a TLS
 * socket factory, say) replaces the one read from properties, a {@link LockService} bean replaces
 * the service. Every {@link RedlockListener} bean is registered, and the metrics of {@code
 * redlock-micrometer} when there is a {@code MeterRegistry}. {@code redlock.enabled=false} makes no
 * lock service; {@link Locked} methods are checked all the same, so one can never run unlocked
 * because the service is missing: the context then fails to start.
 */
@AutoConfiguration
@EnableConfigurationProperties(RedlockProperties.class)
public class RedlockAutoConfiguration {

  /** Creates the auto-configuration; Spring calls it. */
  public RedlockAutoConfiguration() {}

  /** The timer that ends {@code lockAtLeastFor} holds; closed with the context. */
  @Bean(destroyMethod = "close")
  static DelayedReleases redlockDelayedReleases() {
    return new DelayedReleases();
  }

  /** The proxy maker for {@link Locked} methods; it looks the lock service up at each call. */
  @Bean
  static LockedBeanPostProcessor redlockLockedBeanPostProcessor(
      ObjectProvider<LockService> locks,
      ObjectProvider<StoreSettings> storeSettings,
      ObjectProvider<DelayedReleases> releases,
      ConfigurableListableBeanFactory beanFactory) {
    LockedInterceptor interceptor =
        new LockedInterceptor(
            locks::getObject,
            () -> {
              LockService service = locks.getObject();
              if (service instanceof Redlock redlock) {
                return redlock.config().settings();
              }
              StoreSettings own = storeSettings.getIfAvailable();
              return own != null ? own.settings() : LockSettings.builder().build();
            },
            releases::getObject,
            beanFactory::resolveEmbeddedValue,
            LockedMethod.beans(beanFactory));
    return new LockedBeanPostProcessor(interceptor);
  }

  static List<RedlockListener> listeners(
      ObjectProvider<RedlockListener> listeners, ObjectProvider<ListenerSource> sources) {
    List<RedlockListener> all = new ArrayList<>();
    listeners.orderedStream().forEach(all::add);
    sources.orderedStream().forEach(source -> source.listener().ifPresent(all::add));
    return all;
  }

  /** The lock service, unless {@code redlock.enabled=false}. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnProperty(
      prefix = "redlock",
      name = "enabled",
      havingValue = "true",
      matchIfMissing = true)
  static class Stores {
    /** {@code redlock.store=redis} (the default): a quorum of Redis nodes. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(
        prefix = "redlock",
        name = "store",
        havingValue = "redis",
        matchIfMissing = true)
    static class RedisStore {
      @Bean
      @ConditionalOnMissingBean
      RedlockConfig redlockConfig(
          RedlockProperties properties,
          ObjectProvider<RedlockListener> listeners,
          ObjectProvider<ListenerSource> sources) {
        RedlockConfig.Builder builder = RedlockConfig.builder();
        listeners(listeners, sources).forEach(builder::listener);
        return builder.properties(properties.coreProperties()).build();
      }

      @Bean(destroyMethod = "close")
      @ConditionalOnMissingBean(LockService.class)
      Redlock redlock(RedlockConfig config) {
        return Redlock.create(config);
      }
    }

    /** {@code redlock.store=jdbc}: leases in a table of the application's {@code DataSource}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "redlock", name = "store", havingValue = "jdbc")
    @ConditionalOnClass(name = "dev.redlock.jdbc.JdbcLeases")
    static class JdbcStore {
      @Bean
      StoreSettings redlockStoreSettings(
          RedlockProperties properties,
          ObjectProvider<RedlockListener> listeners,
          ObjectProvider<ListenerSource> sources) {
        LockSettings.Builder builder = LockSettings.builder();
        try {
          builder.timeout(properties.getJdbc().getTimeout());
        } catch (IllegalArgumentException | NullPointerException e) {
          throw new IllegalArgumentException("redlock.jdbc.timeout: " + e.getMessage(), e);
        }
        listeners(listeners, sources).forEach(builder::listener);
        return new StoreSettings(builder.properties(properties.coreProperties()).build());
      }

      @Bean(destroyMethod = "close")
      @ConditionalOnMissingBean(LockService.class)
      LockService redlockJdbcLeases(
          ObjectProvider<DataSource> dataSources,
          RedlockProperties properties,
          StoreSettings settings) {
        DataSource dataSource = dataSources.getIfUnique();
        if (dataSource == null) {
          throw new IllegalStateException(
              "redlock.store=jdbc needs one DataSource bean (spring.datasource.url and friends), "
                  + "found "
                  + dataSources.stream().count());
        }
        String table = properties.getJdbc().getTable();
        if (properties.getJdbc().isCreateTable()) {
          JdbcLeases.createTableIfAbsent(dataSource, table);
        }
        return JdbcLeases.create(dataSource, table, settings.settings());
      }
    }

    /** {@code redlock.store=jdbc} without {@code redlock-jdbc}: say so at start-up. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "redlock", name = "store", havingValue = "jdbc")
    @ConditionalOnMissingClass("dev.redlock.jdbc.JdbcLeases")
    static class JdbcStoreMissing {
      @Bean
      LockService redlockJdbcLeases() {
        throw new IllegalStateException(
            "redlock.store=jdbc needs dev.redlock:redlock-jdbc on the class path");
      }
    }

    /** The meters of {@code redlock-micrometer}, when the application has Micrometer. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.core.instrument.MeterRegistry")
    static class Metrics {
      @Bean
      ListenerSource redlockMetrics(ObjectProvider<MeterRegistry> registries) {
        return () -> Optional.ofNullable(registries.getIfUnique()).map(RedlockMetrics::new);
      }
    }
  }
}
