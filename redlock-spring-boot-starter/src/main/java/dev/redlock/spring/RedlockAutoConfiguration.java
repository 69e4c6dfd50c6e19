package dev.redlock.spring;

import dev.redlock.Redlock;
import dev.redlock.RedlockListener;
import dev.redlock.config.RedlockConfig;
import dev.redlock.jdbc.JdbcLeases;
import dev.redlock.micrometer.RedlockMetrics;
import dev.redlock.spi.LeaseStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Function;
import javax.sql.DataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Makes the application's {@link Redlock} from {@code redlock.*} properties ({@link
 * RedlockProperties}), closed with the context: over {@code redlock.nodes}, or with {@code
 * redlock.store=jdbc} over a table of the application's {@code DataSource}; and puts the lock
 * around {@link Locked} methods.
 *
 * <p>Each part steps aside for the application's own: a {@link RedlockConfig} bean (for a TLS
 * socket factory, say) replaces the one read from properties, a {@link Redlock} bean replaces the
 * starter's. Every {@link RedlockListener} bean is registered, and the metrics of {@code
 * redlock-micrometer} when there is a {@code MeterRegistry}. {@code redlock.enabled=false} makes no
 * Redlock; {@link Locked} methods are checked all the same, so one can never run unlocked because
 * the Redlock is missing: the context then fails to start.
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

  /** The proxy maker for {@link Locked} methods; it looks the Redlock up at each call. */
  @Bean
  static LockedBeanPostProcessor redlockLockedBeanPostProcessor(
      ObjectProvider<Redlock> locks,
      ObjectProvider<DelayedReleases> releases,
      ConfigurableListableBeanFactory beanFactory) {
    LockedInterceptor interceptor =
        new LockedInterceptor(
            locks::getObject,
            releases::getObject,
            beanFactory::resolveEmbeddedValue,
            LockedMethod.beans(beanFactory));
    return new LockedBeanPostProcessor(interceptor);
  }

  /**
   * Once every bean is made, checks each {@link Locked} method against the Redlock's settings, so
   * that a ttl every call would be refused fails the start instead.
   */
  @Bean
  static SmartInitializingSingleton redlockLockedMethodsCheck(
      LockedBeanPostProcessor lockedMethods, ObjectProvider<Redlock> locks) {
    return () -> {
      Redlock redlock = locks.getIfUnique();
      if (redlock != null) {
        lockedMethods.checkAgainst(redlock.config());
      }
    };
  }

  /**
   * A bad setting from the core, as the start-up report shows it ({@link RedlockFailureAnalyzer}).
   */
  static RedlockSettingsException badProperty(IllegalArgumentException e) {
    return e instanceof RedlockSettingsException settings
        ? settings
        : new RedlockSettingsException(e.getMessage(), RedlockSettingsException.FIX_PROPERTY, e);
  }

  /** In a servlet web application: a @Locked method's lock not acquired is a 409 or a 503. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
  @ConditionalOnClass(name = "org.springframework.web.servlet.HandlerExceptionResolver")
  static class Web {
    @Bean
    @ConditionalOnMissingBean
    LockedStatus redlockLockedStatus() {
      return new LockedStatus();
    }
  }

  static List<RedlockListener> listeners(
      ObjectProvider<RedlockListener> listeners, ObjectProvider<ListenerSource> sources) {
    List<RedlockListener> all = new ArrayList<>();
    listeners.orderedStream().forEach(all::add);
    sources.orderedStream().forEach(source -> source.listener().ifPresent(all::add));
    return all;
  }

  /** The Redlock, unless {@code redlock.enabled=false}. */
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
        try {
          return builder.properties(properties.coreProperties()).build();
        } catch (IllegalArgumentException e) {
          throw badProperty(e);
        }
      }

      @Bean(destroyMethod = "close")
      @ConditionalOnMissingBean(Redlock.class)
      Redlock redlock(RedlockConfig config) {
        JedisVersion.check(JedisVersion.onClassPath());
        return Redlock.create(config);
      }
    }

    /**
     * {@code redlock.store=jdbc}: leases in a table of the application's {@code DataSource} ({@link
     * JdbcLeases#store}), with {@code redlock.jdbc.timeout} as the config's {@code nodeTimeout}.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "redlock", name = "store", havingValue = "jdbc")
    @ConditionalOnClass(name = "dev.redlock.jdbc.JdbcLeases")
    static class JdbcStore {
      @Bean(destroyMethod = "close")
      @ConditionalOnMissingBean(Redlock.class)
      Redlock redlockJdbcLeases(
          ObjectProvider<DataSource> dataSources,
          RedlockProperties properties,
          ObjectProvider<RedlockListener> listeners,
          ObjectProvider<ListenerSource> sources) {
        Properties core = properties.coreProperties();
        if (core.containsKey("redlock.nodeTimeout")) {
          throw badProperty(
              new IllegalArgumentException(
                  "redlock.nodeTimeout is a setting of the Redis store only: with"
                      + " redlock.store=jdbc, set redlock.jdbc.timeout"));
        }
        RedlockConfig.Builder builder = RedlockConfig.builder();
        try {
          builder.nodeTimeout(properties.getJdbc().getTimeout());
        } catch (IllegalArgumentException | NullPointerException e) {
          throw badProperty(
              new IllegalArgumentException("redlock.jdbc.timeout: " + e.getMessage(), e));
        }
        builder.store(new TableStore(dataSources, properties.getJdbc()));
        listeners(listeners, sources).forEach(builder::listener);
        RedlockConfig config;
        try {
          config = builder.properties(core).build();
        } catch (IllegalArgumentException e) {
          throw badProperty(e);
        }
        // The settings are checked before the database is touched: the store is made by create.
        return Redlock.create(config);
      }

      /**
       * The store of {@code redlock.jdbc.*}: the one {@code DataSource} bean's table, created first
       * if {@code redlock.jdbc.create-table} asks. {@link Redlock#create} calls it once.
       */
      private record TableStore(ObjectProvider<DataSource> dataSources, RedlockProperties.Jdbc jdbc)
          implements Function<Duration, LeaseStore<?>> {
        @Override
        public LeaseStore<?> apply(Duration nodeTimeout) {
          DataSource dataSource = dataSources.getIfUnique();
          if (dataSource == null) {
            throw new IllegalStateException(
                "redlock.store=jdbc needs one DataSource bean (spring.datasource.url and friends), "
                    + "found "
                    + dataSources.stream().count());
          }
          if (jdbc.isCreateTable()) {
            JdbcLeases.createTableIfAbsent(dataSource, jdbc.getTable());
          }
          return JdbcLeases.store(dataSource, jdbc.getTable()).apply(nodeTimeout);
        }

        @Override
        public String toString() {
          return "redlock.store=jdbc (table " + jdbc.getTable() + ")";
        }
      }
    }

    /** {@code redlock.store=jdbc} without {@code redlock-jdbc}: say so at start-up. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "redlock", name = "store", havingValue = "jdbc")
    @ConditionalOnMissingClass("dev.redlock.jdbc.JdbcLeases")
    static class JdbcStoreMissing {
      @Bean
      Redlock redlockJdbcLeases() {
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
