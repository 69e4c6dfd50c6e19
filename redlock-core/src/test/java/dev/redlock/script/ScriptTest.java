package dev.redlock.script;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ScriptTest {
  @Test
  void scriptsLoadFromResourcesWithTheirSha1() {
    assertTrue(Script.RELEASE.source().contains("redis.call('DEL'"));
    assertTrue(Script.EXTEND.source().contains("redis.call('PEXPIRE'"));
    assertTrue(Script.RELEASE.sha1().matches("[0-9a-f]{40}"));
    assertTrue(Script.RELEASE_ALL.source().contains("redis.call('DEL'"));
    assertTrue(Script.EXTEND_ALL.source().contains("redis.call('PEXPIRE'"));
  }

  /**
   * The multi-resource acquire runs the restart guard of the single-resource one, character for
   * character (its keys sit where acquire.lua has them for that): one guard, whichever lease asks.
   * Planted: a guard edit in acquire.lua alone fails this.
   */
  @Test
  void theMultiResourceAcquireRunsTheSameRestartGuard() {
    String guard = guardOf(Script.ACQUIRE.source());
    assertTrue(guard.contains("local life_key, witness_key, dry = KEYS[2], KEYS[4], false"), guard);
    assertTrue(guard.contains("redis.call('GET', life_key)"), guard);
    assertTrue(guard.contains("return -(math.floor(left / 1000) + 1)"), guard);
    assertEquals(guard, guardOf(Script.ACQUIRE_ALL.source()));
  }

  /**
   * Both sides of a read-write lock run the same restart guard too, with the keys where acquire.lua
   * has them: a reader's or a writer's vote on a node that may have forgotten leases is refused as
   * a plain lock's is. Planted: a guard edit in acquire.lua alone fails this.
   */
  @Test
  void bothSidesOfAReadWriteLockRunTheSameRestartGuard() {
    String guard = guardOf(Script.ACQUIRE.source());
    assertEquals(guard, guardOf(Script.READ_ACQUIRE.source()));
    assertEquals(guard, guardOf(Script.WRITE_ACQUIRE.source()));
  }

  /**
   * The guard is one text (restart_guard.lua), and so is the fencing token's tail
   * (fencing_token.lua), that the acquiring scripts and the read-only probe include when they load:
   * each holds the guard's text verbatim, and no include is left unreplaced.
   */
  @Test
  void theRestartGuardIsOneTextIncludedByEveryAcquiringScript() throws Exception {
    String guard;
    try (var in = Script.class.getResourceAsStream("restart_guard.lua")) {
      guard = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    for (Script script :
        java.util.List.of(
            Script.ACQUIRE,
            Script.ACQUIRE_ALL,
            Script.READ_ACQUIRE,
            Script.WRITE_ACQUIRE,
            Script.GUARD_PROBE)) {
      assertTrue(!script.source().contains(Script.INCLUDE), "every include replaced");
      assertTrue(script.source().contains(guard), "the guard's text, verbatim");
    }
  }

  /**
   * The break of a read-write lock raises its counter with the break of a lock's own text
   * (force_fence.lua, included by both, its keys where force_release.lua has them), and
   * force_release.lua is byte for byte what it was when the text became one file but for the
   * comment corrected after the review (the SHA-1 pinned here is that one: any other change is
   * seen). Planted: an edit of the raise in one script alone, or an include left unreplaced, fails
   * this.
   */
  @Test
  void bothForceReleasesRaiseTheCounterWithTheSameText() {
    assertEquals("ebe50df3cbf3d0a9a47f1a9a8ea85a5a07efdf8b", Script.FORCE_RELEASE.sha1());
    String raise = raiseOf(Script.FORCE_RELEASE.source());
    assertTrue(raise.contains("now + tonumber(ARGV[2]) * 1000"), raise);
    assertTrue(raise.contains("redis.call('SET', KEYS[2]"), raise);
    assertEquals(raise, raiseOf(Script.FORCE_RELEASE_READ_WRITE.source()));
    assertTrue(!Script.FORCE_RELEASE_READ_WRITE.source().contains(Script.INCLUDE));
  }

  /** From the clock read to the end of the counter's raise. */
  private static String raiseOf(String source) {
    int begin = source.indexOf("local t = redis.call('TIME')");
    int end = source.indexOf("\nend\n", begin);
    assertTrue(begin >= 0 && end > begin, "raise missing");
    return source.substring(begin, end);
  }

  private static String guardOf(String source) {
    int begin = source.indexOf("-- ---- restart guard: begin");
    int end = source.indexOf("-- ---- restart guard: end ----");
    assertTrue(begin >= 0 && end > begin, "guard markers missing");
    return source.substring(source.indexOf('\n', begin) + 1, end);
  }
}
