package dev.redlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.testkit.Persistence;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code redlock status} of a plain lock: the verdict, per node and as JSON. */
class CliStatusIT extends CliITBase {
  /**
   * Two of three nodes restarted without persistence answer, free, but sit out the restart guard:
   * no lock can be won, so the verdict is UNDECIDED, not FREE.
   */
  @Test
  void statusIsUndecidedWhenTooFewNodesCanVote() {
    nodes.node(1).restart(Persistence.NONE); // the fixture vouches for them before the next test
    nodes.node(2).restart(Persistence.NONE);
    Result r = redlock("status", "cli:quarantined");
    assertTrue(r.out().contains("cli:quarantined: UNDECIDED"), r.toString());
    Result rw = redlock("status", "--read-write", "cli:quarantined-rw");
    assertTrue(rw.out().contains("cli:quarantined-rw: UNDECIDED"), rw.toString());
  }

  @Test
  void statusShowsHolderTtlFenceAndVerdictPerNodeAndAsJson() throws Exception {
    try (Redlock holder = client();
        Lease held = holder.acquire("cli:status", Duration.ofSeconds(20), NO_HANG)) {
      Result r = redlock("status", "cli:status", "cli:other");
      assertEquals(0, r.status(), r.toString());
      assertTrue(r.out().contains("cli:status: HELD by "), r.toString());
      assertTrue(r.out().contains("cli:other: FREE"), r.toString());
      assertTrue(
          r.out()
              .matches(
                  "(?s).*held  ttl [0-9.]+s  owner [0-9a-f]{8}  fence "
                      + held.fencingToken()
                      + ".*"),
          r.toString());

      Result json = redlock("status", "--json", "cli:status");
      assertEquals(0, json.status(), json.toString());
      assertTrue(
          json.out().startsWith("[{\"resource\":\"cli:status\",\"verdict\":\"HELD\""),
          json.toString());
      assertTrue(json.out().contains("\"fencingCounter\":" + held.fencingToken()), json.toString());
    }
  }

  @Test
  void statusReportsAnUnreachableNodeWithoutFailing() {
    Result r =
        redlock(
            "", Map.of(), "status", "--nodes", nodeList + ",redis://127.0.0.1:1", "cli:partial");
    assertEquals(0, r.status(), r.toString());
    assertTrue(r.out().contains("redis://127.0.0.1:1  unreachable: "), r.toString());
  }
}
