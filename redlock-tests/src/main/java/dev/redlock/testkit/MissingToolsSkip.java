package dev.redlock.testkit;

import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.opentest4j.TestAbortedException;

/**
 * {@link Tools#requireOrSkip}'s rule for every test, wherever the tool turns out to be missing (a
 * node started deep in a fault suite, a {@code @BeforeAll}): a {@link MissingToolException}, on its
 * own or as the cause of another failure, skips the test with one line naming what to install,
 * unless {@code CI=true}, where it fails as before. Registered for redlock-tests' own tests by
 * {@code META-INF/services} (JUnit's extension auto-detection, turned on in {@code
 * junit-platform.properties}).
 */
public final class MissingToolsSkip
    implements TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler {
  private final BooleanSupplier ci;

  /** The rule as the environment says: CI when {@code CI=true}. */
  public MissingToolsSkip() {
    this(Tools::isCi);
  }

  MissingToolsSkip(BooleanSupplier ci) {
    this.ci = ci;
  }

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable thrown)
      throws Throwable {
    throw skipOrKeep(thrown);
  }

  @Override
  public void handleBeforeAllMethodExecutionException(ExtensionContext context, Throwable thrown)
      throws Throwable {
    throw skipOrKeep(thrown);
  }

  @Override
  public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable thrown)
      throws Throwable {
    throw skipOrKeep(thrown);
  }

  /** What to throw instead of {@code thrown}: a skip outside CI for a missing tool, else itself. */
  Throwable skipOrKeep(Throwable thrown) {
    if (ci.getAsBoolean()) {
      return thrown;
    }
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      if (t instanceof MissingToolException missing) {
        return new TestAbortedException("skipped: " + missing.getMessage(), thrown);
      }
    }
    return thrown;
  }
}
