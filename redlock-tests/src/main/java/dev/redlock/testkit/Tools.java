package dev.redlock.testkit;

import java.util.function.Supplier;
import org.junit.jupiter.api.Assumptions;

/**
 * The rule for missing fault tools: under {@code CI=true} a test that cannot find its tools
 * <em>fails</em>, so a green CI always means the faults really ran; on a laptop it skips, with a
 * message saying what to install.
 */
public final class Tools {
  private Tools() {}

  /** Whether this run is CI ({@code CI=true} in the environment). */
  public static boolean isCi() {
    return "true".equalsIgnoreCase(System.getenv("CI"));
  }

  /**
   * Runs {@code setup}; if it throws {@link MissingToolException}, fails under CI and aborts
   * (skips) the test elsewhere.
   */
  public static <T> T requireOrSkip(Supplier<T> setup) {
    try {
      return setup.get();
    } catch (MissingToolException e) {
      if (isCi()) {
        throw new AssertionError("CI=true and a required tool is missing: " + e.getMessage(), e);
      }
      Assumptions.abort("skipped: " + e.getMessage());
      throw e; // unreachable: abort always throws
    }
  }
}
