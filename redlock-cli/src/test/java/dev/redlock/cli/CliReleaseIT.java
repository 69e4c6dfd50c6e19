package dev.redlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.admin.LockStatus;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@code redlock release --force} of a plain lock. */
class CliReleaseIT extends CliITBase {
  @Test
  void releaseAsksForTheResourceNameAndOnlyThenBreaksTheLock() throws Exception {
    try (Redlock holder = client()) {
      Lease held = holder.acquire("cli:stuck", Duration.ofSeconds(30), NO_HANG);
      Map<String, String> env = Map.of("REDLOCK_NODES", nodeList);
      Result declined = redlock("nope\n", env, "release", "--force", "cli:stuck");
      assertEquals(ExitCodes.CHECK_FAILED, declined.status(), declined.toString());
      assertEquals(LockStatus.Verdict.HELD, verdict("cli:stuck"));

      Result confirmed =
          redlock("cli:stuck\n", env, "release", "--force", "--reason", "host died", "cli:stuck");
      assertEquals(0, confirmed.status(), confirmed.toString());
      assertTrue(confirmed.out().contains("deleted"), confirmed.toString());
      assertEquals(LockStatus.Verdict.FREE, verdict("cli:stuck"));
      assertFalse(
          held.isValid() && held.extend(Duration.ofSeconds(5)), "the old holder cannot extend");
    }
  }

  @Test
  void releaseWithYesDoesNotAsk() throws Exception {
    try (Redlock holder = client()) {
      holder.acquire("cli:yes", Duration.ofSeconds(30), NO_HANG);
      Result r = redlock("release", "--force", "--yes", "cli:yes");
      assertEquals(0, r.status(), r.toString());
      assertEquals(LockStatus.Verdict.FREE, verdict("cli:yes"));
    }
  }
}
