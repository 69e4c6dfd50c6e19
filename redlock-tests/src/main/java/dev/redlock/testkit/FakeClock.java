package dev.redlock.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Starts a process on a clock that runs at another rate, or starts at an offset from real time,
 * through libfaketime: the library is preloaded into the process itself (rather than run through
 * the {@code faketime} wrapper, which forks), so the PID we hold is the node's own and SIGSTOP /
 * SIGKILL reach it.
 */
final class FakeClock {
  private static final List<String> LIBRARIES =
      List.of(
          "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
          "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
          "/usr/lib/faketime/libfaketime.so.1",
          "/usr/local/lib/faketime/libfaketime.so.1");

  /** What libfaketime prints when the process's allocator recurses into it at start. */
  static final String CLASH = "libfaketime: Cannot recover";

  private FakeClock() {}

  /** Whether a process with this rate and offset needs libfaketime at all. */
  static boolean needed(double rate, Duration offset) {
    return rate != 1.0 || !offset.isZero();
  }

  /**
   * Sets up {@code environment} so the process's clocks run at {@code rate}, starting {@code
   * offset} away from real time.
   *
   * @throws MissingToolException if libfaketime is not installed
   */
  static void apply(Map<String, String> environment, double rate, Duration offset) {
    environment.put("LD_PRELOAD", library().toString());
    environment.put("FAKETIME", spec(rate, offset));
    if (rate == 1.0) {
      // A clock stepped at boot is the wall clock; CLOCK_MONOTONIC is not stepped by NTP or an
      // operator, so it keeps running on real time.
      environment.put("DONT_FAKE_MONOTONIC", "1");
    }
  }

  /**
   * libfaketime's {@code FAKETIME}: a relative offset in seconds ({@code "-2.500"}: start 2.5 s
   * behind real time, then advance normally), then an optional rate ({@code "+0 x2.0"}: start at
   * real time, run twice as fast). See libfaketime's README, "Using offsets for relative dates".
   */
  static String spec(double rate, Duration offset) {
    String start =
        offset.isZero() ? "+0" : String.format(Locale.ROOT, "%+.3f", offset.toNanos() / 1e9);
    return rate == 1.0 ? start : start + String.format(Locale.ROOT, " x%s", rate);
  }

  static Path library() {
    String explicit = System.getenv("FAKETIME_LIB");
    if (explicit != null && !explicit.isBlank()) {
      Path p = Path.of(explicit);
      if (Files.isReadable(p)) {
        return p;
      }
      throw new MissingToolException("FAKETIME_LIB=" + explicit + " is not a readable file");
    }
    return LIBRARIES.stream()
        .map(Path::of)
        .filter(Files::isReadable)
        .findFirst()
        .orElseThrow(
            () ->
                new MissingToolException(
                    "libfaketime not found (clock-fault nodes need it): apt-get install faketime,"
                        + " or set FAKETIME_LIB"));
  }
}
