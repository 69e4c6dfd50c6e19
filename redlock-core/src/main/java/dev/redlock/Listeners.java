package dev.redlock;

import dev.redlock.internal.TokenHash;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The configured {@link RedlockListener}s and the events the engine tells them. An event is built
 * only if someone listens; a listener that throws is logged and never breaks the lock path.
 */
final class Listeners {
  // The engine's logger, where operators route the lock's own messages.
  private static final Logger log = LoggerFactory.getLogger(LeaseEngine.class);

  private final List<RedlockListener> listeners;
  private final int quorum;

  Listeners(List<RedlockListener> listeners, int quorum) {
    this.listeners = listeners;
    this.quorum = quorum;
  }

  boolean isEmpty() {
    return listeners.isEmpty();
  }

  void attempt(
      LockEvent.Kind kind,
      String resource,
      long elapsedNanos,
      int votes,
      String reason,
      Supplier<List<NodeOutcome>> nodes) {
    if (!listeners.isEmpty()) {
      emit(
          new LockEvent(
              kind,
              resource,
              null,
              0,
              Duration.ZERO,
              Duration.ofNanos(elapsedNanos),
              votes,
              quorum,
              reason,
              nodes));
    }
  }

  void lease(
      LockEvent.Kind kind,
      ManagedLease<?> lease,
      long validityNanos,
      long elapsedNanos,
      int votes,
      String reason,
      Supplier<List<NodeOutcome>> nodes) {
    if (!listeners.isEmpty()) {
      emit(
          new LockEvent(
              kind,
              lease.resource(),
              TokenHash.of(lease.held().request().token()),
              lease.fencingToken(),
              Duration.ofNanos(validityNanos),
              Duration.ofNanos(elapsedNanos),
              votes,
              quorum,
              reason,
              nodes));
    }
  }

  private void emit(LockEvent event) {
    for (RedlockListener listener : listeners) {
      try {
        listener.onEvent(event);
      } catch (RuntimeException e) {
        log.error("a RedlockListener threw on {}; the lock carries on", event, e);
      }
    }
  }
}
