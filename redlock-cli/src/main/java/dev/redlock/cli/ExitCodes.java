package dev.redlock.cli;

/**
 * The exit statuses of {@code redlock}, documented in {@code docs/operations.md}. {@code run}
 * otherwise exits with its command's own status.
 */
final class ExitCodes {
  /** Done; {@code doctor}: no check failed. */
  static final int OK = 0;

  /**
   * {@code doctor}: at least one check failed; {@code release}, {@code quarantine}, {@code
   * init-nodes}: not confirmed; {@code init-nodes}: a node is not new.
   */
  static final int CHECK_FAILED = 1;

  /** Bad flags, a bad node list, a bad configuration file. */
  static final int USAGE = 2;

  /** {@code run}: the lock was not acquired within {@code --wait} (EX_TEMPFAIL: try later). */
  static final int NOT_ACQUIRED = 75;

  /** {@code run}: the lease was lost while the command ran; the command was terminated. */
  static final int LEASE_LOST = 76;

  /** redlock itself failed (an unexpected error). */
  static final int FAILED = 125;

  /** {@code run}: the command exists but cannot be run. */
  static final int NOT_EXECUTABLE = 126;

  /** {@code run}: the command was not found. */
  static final int NOT_FOUND = 127;

  private ExitCodes() {}
}
