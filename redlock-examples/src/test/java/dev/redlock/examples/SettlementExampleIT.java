package dev.redlock.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The README's first command must keep working: the example runs on its own nodes and its check
 * passes.
 */
class SettlementExampleIT {

  @Test
  void settlesEveryEntryOnceOnItsOwnNodesDespiteAKilledNode() throws Exception {
    ExampleRun<Boolean> run =
        ExampleRun.onItsOwnNodes(out -> new SettlementExample(out, 12, 3).run(List.of()));
    boolean ok = run.result();
    String output = run.output();
    assertTrue(ok, output);
    assertTrue(output.contains("launched 5 local redis-server nodes"), output);
    assertTrue(output.contains("fault: killing node"), output);
    // After the kill, every grant's per-node account shows the killed node, and never as a yes:
    // refused at connect, or not awaited (the quorum decided before its failure came back).
    String killed =
        output.substring(output.indexOf("fault: killing node ") + "fault: killing node ".length());
    killed = killed.substring(0, killed.indexOf(' '));
    String afterKill = output.substring(output.indexOf("fault: killing node "));
    int grants = 0;
    for (String line : afterKill.split("\n")) {
      if (line.contains("holds the lock")) {
        grants++;
        assertTrue(line.contains(killed + " "), "the account names the killed node: " + line);
        assertTrue(!line.contains(killed + " OK"), "the killed node never says yes: " + line);
      }
    }
    assertTrue(grants > 0, "settlement went on after the kill:\n" + output);
    assertTrue(output.contains("CHECK PASSED: every entry settled exactly once"), output);
  }

  @Test
  void takesNodesFromTheFlagOrTheEnvironment() {
    assertEquals(
        List.of("redis://a:1", "redis://b:2"),
        SettlementExample.nodesFrom(new String[] {"--nodes", "redis://a:1, redis://b:2"}, null));
    assertEquals(
        List.of("redis://c:3"),
        SettlementExample.nodesFrom(new String[] {"--nodes=redis://c:3"}, "redis://ignored:1"));
    assertEquals(List.of("redis://e:5"), SettlementExample.nodesFrom(new String[0], "redis://e:5"));
    assertEquals(List.of(), SettlementExample.nodesFrom(new String[0], " "));
    assertThrows(
        IllegalArgumentException.class,
        () -> SettlementExample.nodesFrom(new String[] {"--bogus"}, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> SettlementExample.nodesFrom(new String[] {"--nodes", ","}, null));
  }
}
