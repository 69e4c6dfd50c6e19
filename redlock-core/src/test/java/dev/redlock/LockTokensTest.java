package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LockTokensTest {
  @Test
  void tokensAre128BitHexAndDoNotRepeat() {
    LockTokens tokens = new LockTokens();
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < 10_000; i++) {
      String token = tokens.next();
      assertTrue(token.matches("[0-9a-f]{32}"), token);
      assertTrue(seen.add(token));
    }
    assertEquals(10_000, seen.size());
  }

  /**
   * Tokens are drawn many at a time: each still has its own 128 bits. Across draws, every hex digit
   * of every position takes each of its 16 values about equally often (a token made twice from one
   * draw's bytes, or from zeroed bytes, would not).
   */
  @Test
  void everyPositionOfEveryTokenIsUniformAcrossDraws() {
    LockTokens tokens = new LockTokens();
    int n = 64 * LockTokens.TOKENS_PER_DRAW;
    int[][] counts = new int[32][16];
    for (int i = 0; i < n; i++) {
      String token = tokens.next();
      for (int p = 0; p < 32; p++) {
        counts[p][Character.digit(token.charAt(p), 16)]++;
      }
    }
    for (int p = 0; p < 32; p++) {
      for (int d = 0; d < 16; d++) {
        // expected n/16 = 128 each; past 6 sigma (sqrt(128 * 15/16) = 11) either way: about one
        // run in a million trips it by chance, a lost bit (0 or 256) never passes
        assertTrue(Math.abs(counts[p][d] - n / 16) < 70, "position " + p + " digit " + d);
      }
    }
  }
}
