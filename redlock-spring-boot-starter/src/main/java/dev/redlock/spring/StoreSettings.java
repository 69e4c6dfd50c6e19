package dev.redlock.spring;

import dev.redlock.LockSettings;

/**
 * The settings of a lock service the starter made that is not a {@link dev.redlock.Redlock} (whose
 * own are {@code config().settings()}): what {@link Locked} methods read {@code taskInterruption}
 * from.
 */
record StoreSettings(LockSettings settings) {}
