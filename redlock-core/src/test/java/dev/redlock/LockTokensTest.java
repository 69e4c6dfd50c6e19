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
}
