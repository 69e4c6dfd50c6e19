package dev.redlock.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LongJobExampleIT {
  @Test
  void theJobOutlivesItsTtlThenStopsWhenTheLeaseIsLost() throws Exception {
    ExampleRun<Integer> run = ExampleRun.onItsOwnNodes(out -> new LongJobExample(out).run());
    int written = run.result();
    String output = run.output();
    // 20 batches of 100 ms each (twice the ttl) are held by renewal; after the freeze the job
    // may write while the lease is still valid, then must stop: well short of all 40.
    assertTrue(written >= 20 && written < 40, "written " + written + "\n" + output);
    assertTrue(output.contains("onLost: "), output);
    assertTrue(output.contains("job stopped after " + written + " batches"), output);
  }
}
