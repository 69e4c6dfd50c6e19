package dev.redlock;

/**
 * Receives the lock's events: attempts, grants, failures, extensions, losses and releases. For
 * metrics, audit trails and tests. Register with {@link RedlockConfig.Builder#listener}; none is
 * registered by default, and then no event is even built.
 *
 * <p>Events a caller causes (attempts, grants, failures, its own extends, releases) are delivered
 * on the caller's thread; events the library finds on its own threads (a renewal's extension, a
 * loss found by a timer or a renewal) on one of the Redlock's callback threads, never a timer or
 * I/O thread. So the two kinds may reach a listener out of order (a release on the caller's thread
 * before the last renewal's extension, for instance), and from more than one thread at once: a
 * listener must be thread-safe; order by {@link LockEvent}'s content, not by arrival. Keep it short
 * and never block, nor take a lock from it: it runs on the lock path, and the thread that runs an
 * attempt's events may be the first of a line of threads waiting for that resource, and an {@link
 * LockEvent.Kind#ATTEMPT} event runs while its attempt holds one of the Redlock's turns ({@link
 * RedlockConfig#maxAttemptsInFlight}): blocking there holds up the other callers, though an attempt
 * made from it runs in that turn rather than waiting for another (its time counts against the
 * validity of the attempt that runs the event, whose clock has started). A listener that throws is
 * logged and does not disturb the lock or the other listeners.
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
