package dev.redlock.script;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A Lua script kept as a {@code .lua} resource beside this class, loaded once, with its SHA-1 for
 * {@code EVALSHA}.
 */
public final class Script {
  /** Restart guard, SET NX PX and fencing counter in one round trip (see acquire.lua). */
  public static final Script ACQUIRE = load("acquire.lua");

  /** Raises a lagging fencing counter while we hold the key: 1, or 0 if the key is not ours. */
  public static final Script RAISE_FENCE = load("raise_fence.lua");

  /** The protected side's check: writes only if the fencing token is newer (see fenced_set.lua). */
  public static final Script FENCED_SET = load("fenced_set.lua");

  /** Deletes the key only if it still holds our token. Returns 1 if deleted, 0 otherwise. */
  public static final Script RELEASE = load("release.lua");

  /** Sets a new PX ttl only if the key still holds our token: 1 if extended, else 0. */
  public static final Script EXTEND = load("extend.lua");

  /** Several resources at once, all or none on the node (see acquire_all.lua). */
  public static final Script ACQUIRE_ALL = load("acquire_all.lua");

  /** Owner-checked raise of several keys' counters: 1 if every key is ours, else 0, none raised. */
  public static final Script RAISE_FENCE_ALL = load("raise_fence_all.lua");

  /** Owner-checked extend of several keys: 1 if every key is ours (none shortened), else 0. */
  public static final Script EXTEND_ALL = load("extend_all.lua");

  /** Owner-checked delete of several keys, each on its own: how many were deleted. */
  public static final Script RELEASE_ALL = load("release_all.lua");

  /** A read-write lock's write side: no writer and no live reader, else an intent mark. */
  public static final Script WRITE_ACQUIRE = load("write_acquire.lua");

  /** A read-write lock's read side: no writer and no intent mark, then this reader's entry. */
  public static final Script READ_ACQUIRE = load("read_acquire.lua");

  /** Owner-checked extend of a reader's unexpired entry, never shorter: 1, or 0 if not ours. */
  public static final Script READ_EXTEND = load("read_extend.lua");

  /** Owner-checked removal of a reader's entry, raising the lock's counter: 1 if removed. */
  public static final Script READ_RELEASE = load("read_release.lua");

  /** Owner-checked raise of the lock's counter by a reader: 1, or 0 if the entry is not ours. */
  public static final Script READ_RAISE_FENCE = load("read_raise_fence.lua");

  /** The administrator's break of a lock: DEL whoever holds it, counter raised (see the script). */
  public static final Script FORCE_RELEASE = load("force_release.lua");

  /** The administrator's break of a read-write lock, as {@link #FORCE_RELEASE} (see the script). */
  public static final Script FORCE_RELEASE_READ_WRITE = load("force_release_read_write.lua");

  /** The administrator's vouch for a new node: holds nothing of the prefix, marker stamped. */
  public static final Script VOUCH_NEW_NODE = load("vouch_new_node.lua");

  /** What the restart guard's next acquire would decide, writing nothing ({@code GuardProbe}). */
  public static final Script GUARD_PROBE = load("guard_probe.lua");

  private final String source;
  private final String sha1;

  private Script(String source) {
    this.source = source;
    this.sha1 = sha1(source);
  }

  /**
   * A script's line that its fragment's text replaces ({@code --@include restart_guard.lua}): the
   * restart guard is one text, kept once, that every acquiring script runs.
   */
  static final String INCLUDE = "--@include ";

  static Script load(String resource) {
    return new Script(text(resource, true));
  }

  /** The resource's text, with each include line replaced by its fragment's (one level). */
  private static String text(String resource, boolean includes) {
    String text;
    try (InputStream in = Script.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("script resource missing from the jar: " + resource);
      }
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read script " + resource, e);
    }
    if (!includes) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length() * 2);
    for (String line : text.split("(?<=\n)")) {
      if (line.startsWith(INCLUDE)) {
        out.append(text(line.substring(INCLUDE.length()).strip(), false));
      } else {
        out.append(line);
      }
    }
    return out.toString();
  }

  private static String sha1(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required of every JVM", e);
    }
  }

  public String source() {
    return source;
  }

  public String sha1() {
    return sha1;
  }
}
