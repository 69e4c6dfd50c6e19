package dev.redlock.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class FencedSqlExampleIT {
  @Test
  void theStaleHoldersUpdateTouchesNoRow() throws Exception {
    ExampleRun<String> run = ExampleRun.onItsOwnNodes(out -> new FencedSqlExample(out).run());
    String lastWriter = run.result();
    String output = run.output();
    assertEquals("B", lastWriter, output);
    assertTrue(output.contains("0 rows updated -> A knows it lost the lock"), output);
  }
}
