package dev.redlock;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;

/**
 * Makes the owner token of each acquisition: 128 random bits from {@link SecureRandom}, as 32 hex
 * characters. Drawn {@value #TOKENS_PER_DRAW} tokens at a time into a buffer, each byte zeroed once
 * used, so a token costs its string and nothing else.
 */
final class LockTokens {
  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private static final int TOKEN_BYTES = 16;
  static final int TOKENS_PER_DRAW = 32;
  private final SecureRandom random = new SecureRandom();

  // Guarded by this:
  private final byte[] drawn = new byte[TOKEN_BYTES * TOKENS_PER_DRAW];
  private int used = drawn.length; // bytes of `drawn` handed out already: none drawn yet
  private final byte[] hex = new byte[2 * TOKEN_BYTES];

  public synchronized String next() {
    if (used == drawn.length) {
      random.nextBytes(drawn);
      used = 0;
    }
    for (int i = 0; i < TOKEN_BYTES; i++) {
      int b = drawn[used + i];
      drawn[used + i] = 0; // used once: no copy of a token's bits stays behind
      hex[2 * i] = HEX[(b >> 4) & 0xf];
      hex[2 * i + 1] = HEX[b & 0xf];
    }
    used += TOKEN_BYTES;
    return new String(hex, StandardCharsets.US_ASCII);
  }
}
