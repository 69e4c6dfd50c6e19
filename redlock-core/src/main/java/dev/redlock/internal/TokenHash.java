package dev.redlock.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * A short, one-way name for an owner token: the first 8 hex characters of its SHA-256. Logs, events
 * and status output use it to tell holders apart; the token itself, the only proof of ownership, is
 * never shown.
 */
public final class TokenHash {
  private TokenHash() {}

  public static String of(String token) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.US_ASCII));
      StringBuilder hex = new StringBuilder(8);
      for (int i = 0; i < 4; i++) {
        hex.append(Character.forDigit((digest[i] >> 4) & 0xf, 16))
            .append(Character.forDigit(digest[i] & 0xf, 16));
      }
      return hex.toString();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
