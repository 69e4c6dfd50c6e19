package dev.redlock.cli;

import dev.redlock.config.RedlockConfig;
import java.time.Duration;
import picocli.CommandLine;

/** Durations on the command line are written as in properties: 500ms, 30s, 2m, or PT30S. */
final class Durations {
  private Durations() {}

  static Duration parse(String text) {
    try {
      return RedlockConfig.parseDuration(text);
    } catch (IllegalArgumentException e) {
      throw new CommandLine.TypeConversionException(
          "'" + text + "' is not a duration: write 500ms, 30s, 2m or PT30S");
    }
  }

  static String format(Duration d) {
    long ms = d.toMillis();
    return ms < 10_000 ? ms + "ms" : String.format(java.util.Locale.ROOT, "%.1fs", ms / 1000.0);
  }
}
