package dev.redlock.spring;

import dev.redlock.LockUnavailableException;

/**
 * Marks a {@link LockUnavailableException} as a {@link Locked} method's own lock not acquired, so
 * the method did not run ({@link LockedStatus} answers only those). Apart from {@link LockedStatus}
 * so that an application without Spring MVC never loads a web class.
 */
final class NotRun extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private NotRun(String method) {
    super(method + " did not run: its lock was not acquired", null, false, false);
  }

  /** Marks {@code e} as {@code method}'s own lock not acquired, before the method ran. */
  static LockUnavailableException mark(LockUnavailableException e, String method) {
    e.addSuppressed(new NotRun(method));
    return e;
  }
}
