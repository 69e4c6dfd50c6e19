package dev.redlock.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.config.RedlockConfig;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The health check over a configuration without Redis nodes. */
class NodesHealthTest {
  @Test
  void aStoreHasNoNodesToAskAndIsUp() {
    NodesHealth.Check check =
        new NodesHealth(RedlockConfig.builder().store(timeout -> null).build()).check();
    assertTrue(check.up(), check.toString());
    assertEquals(Map.of(), check.details().get("nodes"), check.toString());
  }
}
