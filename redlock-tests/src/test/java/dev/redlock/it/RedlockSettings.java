package dev.redlock.it;

import dev.redlock.LockSettings;
import dev.redlock.RedlockConfig;

/**
 * The contract's clients are made from {@link LockSettings} (what every store shares); a Redlock
 * takes them inside a {@link RedlockConfig}. Shared by the Redis targets and the fake cluster's.
 */
public final class RedlockSettings {
  private RedlockSettings() {}

  /**
   * A builder carrying every one of {@code settings} ({@code timeout} as {@code nodeTimeout}, each
   * listener), with no node yet.
   */
  public static RedlockConfig.Builder from(LockSettings settings) {
    RedlockConfig.Builder config =
        RedlockConfig.builder()
            .nodeTimeout(settings.timeout())
            .clockDriftFactor(settings.clockDriftFactor())
            .retryDelay(settings.retryDelay())
            .retryJitter(settings.retryJitter())
            .renewalFraction(settings.renewalFraction())
            .maxHold(settings.maxHold())
            .taskInterruption(settings.taskInterruption())
            .maxTtl(settings.maxTtl());
    settings.listeners().forEach(config::listener);
    return config;
  }
}
