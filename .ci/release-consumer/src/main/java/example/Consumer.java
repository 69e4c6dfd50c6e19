package example;

import dev.redlock.LockService;
import dev.redlock.LockSettings;
import dev.redlock.RedlockConfig;
import dev.redlock.jdbc.JdbcLeases;
import dev.redlock.micrometer.RedlockMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import javax.sql.DataSource;

/** Uses a type from each module the module-info reaches, directly or through its requirements. */
public final class Consumer {
  private Consumer() {}

  /** A lock service over the given database, and metrics for a Redis lock's configuration. */
  public static LockService locks(DataSource dataSource) {
    RedlockConfig.builder()
        .node("redis://127.0.0.1:6379")
        .listener(new RedlockMetrics(new SimpleMeterRegistry()))
        .build();
    return JdbcLeases.create(dataSource, "locks", LockSettings.builder().build());
  }
}
