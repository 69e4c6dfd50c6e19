package dev.redlock;

/**
 * Receives the lock's events: attempts, grants, failures, extensions, losses and releases. For
 * metrics, audit trails and tests. Register with {@link RedlockConfig.Builder#listener}; none is
 * registered by default, and then no event is even built.
 *
 * <p>Called on the thread where the event happened (a caller, an I/O, renewal or timer thread):
 * keep it short and never block. A listener that throws is logged and does not disturb the lock or
 * the other listeners.
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
