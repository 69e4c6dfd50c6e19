package dev.redlock.testkit;

/**
 * A tool a real-node test needs is not on this machine (a {@code redis-server} binary, the {@code
 * kill} command, permission to signal). The message says what to install.
 *
 * <p>Use {@link Tools#requireOrSkip} in tests: under {@code CI=true} it fails, elsewhere it skips.
 */
public class MissingToolException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public MissingToolException(String message) {
    super(message);
  }

  public MissingToolException(String message, Throwable cause) {
    super(message, cause);
  }
}
