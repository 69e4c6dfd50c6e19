package dev.redlock;

/**
 * The root of every exception this library throws on purpose, apart from argument errors ({@link
 * IllegalArgumentException}, {@link NullPointerException}) and use after close ({@link
 * IllegalStateException}).
 *
 * <p>It is unchecked: a caller that cannot act on a lock failure should not be forced to catch one.
 * Transport and Redis errors are kept as the cause (Jedis exceptions), so a person reading the log
 * sees what each node said.
 */
public class RedlockException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates an exception with a message a person on call can act on.
   *
   * @param message what happened, naming the resource and nodes involved
   */
  public RedlockException(String message) {
    super(message);
  }

  /**
   * Creates an exception with a message and the error that caused it.
   *
   * @param message what happened, naming the resource and nodes involved
   * @param cause the underlying error, kept for the log
   */
  public RedlockException(String message, Throwable cause) {
    super(message, cause);
  }
}
