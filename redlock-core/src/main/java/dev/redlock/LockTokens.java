package dev.redlock;

import java.security.SecureRandom;

/**
 * Makes the owner token of each acquisition: 128 random bits from {@link SecureRandom}, as 32 hex
 * characters. A token identifies one acquisition (not a thread or a process), so a release or
 * extend can only ever touch the keys that acquisition wrote.
 */
final class LockTokens {
  private static final char[] HEX = "0123456789abcdef".toCharArray();
  private final SecureRandom random = new SecureRandom();

  /** A new, unpredictable token. Thread-safe. */
  public String next() {
    byte[] bytes = new byte[16];
    random.nextBytes(bytes);
    char[] out = new char[32];
    for (int i = 0; i < 16; i++) {
      out[2 * i] = HEX[(bytes[i] >> 4) & 0xf];
      out[2 * i + 1] = HEX[bytes[i] & 0xf];
    }
    return new String(out);
  }
}
