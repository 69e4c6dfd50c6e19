package dev.redlock.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The Spring Boot example runs on its own nodes, and no batch is settled twice. */
class SpringSettlementExampleIT {

  @Test
  void twoInstancesSettleEachTickOnce() throws Exception {
    ExampleRun<Boolean> run =
        ExampleRun.onItsOwnNodes(out -> new SpringSettlementExample(out).run(3));
    String output = run.output();
    assertTrue(run.result(), output);
    assertTrue(output.contains("two instances started"), output);
    assertTrue(output.contains("CHECK PASSED: 3 batches, each settled once"), output);
  }
}
