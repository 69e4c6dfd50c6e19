package dev.redlock.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Tools;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class LongJobExampleIT {
  @Test
  void theJobOutlivesItsTtlThenStopsWhenTheLeaseIsLost() throws Exception {
    Tools.requireOrSkip(
        () -> {
          RedisNodes.start(1).close();
          return null;
        });
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    int written = new LongJobExample(new PrintStream(buffer, true, StandardCharsets.UTF_8)).run();
    String output = buffer.toString(StandardCharsets.UTF_8);
    // 20 batches of 100 ms each (twice the ttl) are held by renewal; after the freeze the job
    // may write while the lease is still valid, then must stop: well short of all 40.
    assertTrue(written >= 20 && written < 40, "written " + written + "\n" + output);
    assertTrue(output.contains("onLost: "), output);
    assertTrue(output.contains("job stopped after " + written + " batches"), output);
  }
}
