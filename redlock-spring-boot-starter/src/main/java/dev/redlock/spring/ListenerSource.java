package dev.redlock.spring;

import dev.redlock.RedlockListener;
import java.util.Optional;

/**
 * A listener the starter adds to the Redlock it makes, if it has one to add when the Redlock is
 * made: the metrics, when the application has a {@code MeterRegistry}. An interface of its own, so
 * the auto-configuration never names a Micrometer type where Micrometer may be absent.
 */
interface ListenerSource {
  Optional<RedlockListener> listener();
}
