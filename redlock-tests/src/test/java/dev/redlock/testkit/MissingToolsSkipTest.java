package dev.redlock.testkit;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

class MissingToolsSkipTest {
  private final MissingToolException missing =
      new MissingToolException("libfaketime not found: apt-get install faketime");

  @Test
  void aMissingToolSkipsOutsideCiEvenAsACause() {
    MissingToolsSkip laptop = new MissingToolsSkip(() -> false);
    assertInstanceOf(TestAbortedException.class, laptop.skipOrKeep(missing));
    assertInstanceOf(
        TestAbortedException.class,
        laptop.skipOrKeep(new ExecutionException(new IllegalStateException(missing))));
  }

  @Test
  void underCiItFailsAndOtherFailuresStayFailures() {
    assertSame(missing, new MissingToolsSkip(() -> true).skipOrKeep(missing));
    AssertionError other = new AssertionError("a real failure");
    assertSame(other, new MissingToolsSkip(() -> false).skipOrKeep(other));
  }
}
