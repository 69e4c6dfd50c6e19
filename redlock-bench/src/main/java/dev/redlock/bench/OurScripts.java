package dev.redlock.bench;

import dev.redlock.Redlock;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * This library's Lua scripts, read from its jar as the nodes run them, so the floors do the same
 * work on the nodes as the library does. Read as resources: the bench needs no class of the
 * library's unexported packages.
 */
final class OurScripts {
  /** A script's source and its SHA-1, the name {@code EVALSHA} knows it by. */
  record Lua(String source, String sha1) {}

  static final Lua ACQUIRE = load("acquire.lua");
  static final Lua RELEASE = load("release.lua");

  private OurScripts() {}

  private static Lua load(String name) {
    String path = "/dev/redlock/node/" + name;
    try (InputStream in = Redlock.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("script missing from the library's jar: " + path);
      }
      byte[] bytes = in.readAllBytes();
      return new Lua(
          new String(bytes, StandardCharsets.UTF_8),
          HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bytes)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every JVM", e);
    }
  }
}
