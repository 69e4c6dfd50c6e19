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

  /**
   * The script as the library runs it: its {@code --@include fragment.lua} lines (the restart
   * guard) replaced by the fragment's text, as the library's own loader does.
   */
  private static Lua load(String name) {
    StringBuilder source = new StringBuilder();
    for (String line : read(name).split("(?<=\\n)")) {
      source.append(line.startsWith("--@include ") ? read(line.substring(11).strip()) : line);
    }
    return lua(source.toString());
  }

  /** A script and the SHA-1 {@code EVALSHA} knows it by: one of these, or one of the bench's. */
  static Lua lua(String source) {
    byte[] bytes = source.getBytes(StandardCharsets.UTF_8);
    try {
      return new Lua(
          source, HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bytes)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every JVM", e);
    }
  }

  private static String read(String name) {
    String path = "/dev/redlock/script/" + name;
    try (InputStream in = Redlock.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("script missing from the library's jar: " + path);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
