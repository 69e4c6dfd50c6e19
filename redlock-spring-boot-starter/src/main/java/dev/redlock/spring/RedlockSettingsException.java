package dev.redlock.spring;

/**
 * A setting the starter cannot start with: a {@code redlock.*} property, a {@link Locked}
 * annotation, or the class path. Its message names the setting and the rule; {@link
 * RedlockFailureAnalyzer} shows it, with {@link #action()}, in Spring Boot's start-up report.
 */
final class RedlockSettingsException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  static final String FIX_PROPERTY =
      "Fix the redlock.* property named above; docs/configuration.md gives each key's default and"
          + " rule.";
  static final String FIX_ANNOTATION =
      "Fix the @Locked annotation named above, or the Redlock settings it must fit in.";

  private final String action;

  RedlockSettingsException(String message, String action, Throwable cause) {
    super(message, cause);
    this.action = action;
  }

  /** What the user should do, for the start-up report. */
  String action() {
    return action;
  }
}
