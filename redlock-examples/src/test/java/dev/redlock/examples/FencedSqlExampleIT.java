package dev.redlock.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Tools;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class FencedSqlExampleIT {
  @Test
  void theStaleHoldersUpdateTouchesNoRow() throws Exception {
    Tools.requireOrSkip(
        () -> {
          RedisNodes.start(1).close();
          return null;
        });
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    String lastWriter =
        new FencedSqlExample(new PrintStream(buffer, true, StandardCharsets.UTF_8)).run();
    String output = buffer.toString(StandardCharsets.UTF_8);
    assertEquals("B", lastWriter, output);
    assertTrue(output.contains("0 rows updated -> A knows it lost the lock"), output);
  }
}
