package dev.redlock.testkit;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Starts a process on a clock that runs at another rate, through libfaketime: the library is
 * preloaded into the process itself (rather than run through the {@code faketime} wrapper, which
 * forks), so the PID we hold is the node's own and SIGSTOP / SIGKILL reach it.
 */
final class FakeClock {
  private static final List<String> LIBRARIES =
      List.of(
          "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
          "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
          "/usr/lib/faketime/libfaketime.so.1",
          "/usr/local/lib/faketime/libfaketime.so.1");

  private FakeClock() {}

  /**
   * Sets up {@code environment} so the process's clocks run at {@code rate}.
   *
   * @throws MissingToolException if libfaketime is not installed
   */
  static void apply(Map<String, String> environment, double rate) {
    environment.put("LD_PRELOAD", library().toString());
    // "+0 x2": start at the real time, then run twice as fast.
    environment.put("FAKETIME", String.format(Locale.ROOT, "+0 x%s", rate));
  }

  private static Path library() {
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
