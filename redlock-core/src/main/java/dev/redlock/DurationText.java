package dev.redlock;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as people write them in properties and on the command line. */
final class DurationText {
  private static final Pattern SHORT = Pattern.compile("(\\d+)\\s*(ms|s|m|h)");

  private DurationText() {}

  /**
   * Parses {@code 50ms}, {@code 2s}, {@code 1m}, {@code 1h} or ISO-8601 ({@code PT0.05S}).
   *
   * @param key what the value is, for the error message
   * @throws IllegalArgumentException naming {@code key} and the forms accepted
   */
  public static Duration parse(String key, String value) {
    String text = value.trim().toLowerCase(Locale.ROOT);
    Matcher m = SHORT.matcher(text);
    if (m.matches()) {
      long amount = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(amount);
        case "s" -> Duration.ofSeconds(amount);
        case "m" -> Duration.ofMinutes(amount);
        default -> Duration.ofHours(amount);
      };
    }
    try {
      return Duration.parse(value.trim());
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          key + " must be a duration like 50ms, 2s, 1m or PT0.05S, was '" + value + "'");
    }
  }
}
