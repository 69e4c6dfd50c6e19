/**
 * The one configuration of a {@link dev.redlock.Redlock}: {@link dev.redlock.config.RedlockConfig},
 * immutable and checked once by its builder (or read from properties, {@link
 * dev.redlock.config.RedlockConfig#fromProperties}), with the policies it names, {@link
 * dev.redlock.config.RestartGuard} and {@link dev.redlock.config.TaskInterruption}. Every default
 * and every rule is stated once, here (docs/configuration.md).
 */
package dev.redlock.config;
