package dev.redlock.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

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
      return HexFormat.of().formatHex(digest, 0, 4);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }
}
