package dev.redlock;

import dev.redlock.config.RedlockConfig;

/**
 * Receives the lock's events: attempts, grants, failures, extensions, losses and releases. For
 * metrics, audit trails and tests. Register with {@link RedlockConfig.Builder#listener}; none is
 * registered by default, and then no event is even built.
 *
 * <p>Events a caller causes arrive on the caller's thread; events the library finds (a renewal, a
 * loss found by a timer) on a callback thread. So events may arrive out of order and from several
 * threads at once: a listener must be thread-safe, short, and never block (an {@link
 * LockEvent.Kind#ATTEMPT} event runs inside its attempt's turn). One that throws is logged.
 */
@FunctionalInterface
public interface RedlockListener {
  /** Handles one event. */
  void onEvent(LockEvent event);

  /**
   * The audit trail: one structured line per grant, failure, extension, loss and release, on the
   * logger {@code dev.redlock.audit} at INFO (failed attempts at DEBUG): resource, owner (a short
   * hash of the token, never the token), fencing token, validity, votes.
   */
  static RedlockListener auditLog() {
    return AuditLog.INSTANCE;
  }
}
