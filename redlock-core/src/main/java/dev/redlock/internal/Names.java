package dev.redlock.internal;

import java.util.Objects;
import java.util.function.Consumer;

/** The rules of semaphore and read-write lock names, for the lock and for redlock-admin. */
public final class Names {
  private Names() {}

  /** The most permits a semaphore may have. */
  public static final int MAX_PERMITS = 64;

  /** What a permit's resource adds to its semaphore's name: {@code name@permit:i}. */
  public static final String PERMIT_MARK = "@permit:";

  /**
   * The permits' resources of the semaphore {@code name}, {@code name@permit:0} first; {@code
   * checkResource} is the store's check of a resource name.
   *
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException for a blank name, a name holding {@link #PERMIT_MARK}, a
   *     number of permits out of 1..{@link #MAX_PERMITS}, or a name whose permits' resources the
   *     store refuses (too long for a table's key, the nodes' reserved marks)
   */
  public static String[] permitResources(String name, int permits, Consumer<String> checkResource) {
    if (requireNotBlank(name).contains(PERMIT_MARK)) {
      throw new IllegalArgumentException(
          "name must not contain '"
              + PERMIT_MARK
              + "' (it marks a permit's resource: name@permit:i), was '"
              + name
              + "'");
    }
    if (permits < 1 || permits > MAX_PERMITS) {
      throw new IllegalArgumentException(
          "permits must be between 1 and " + MAX_PERMITS + ", was " + permits);
    }
    String[] resources = new String[permits];
    for (int i = 0; i < permits; i++) {
      resources[i] = name + PERMIT_MARK + i;
    }
    String longest = resources[permits - 1];
    try {
      checkResource.accept(longest);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "name must make permit resources the store accepts ('"
              + longest
              + "'): "
              + e.getMessage(),
          e);
    }
    return resources;
  }

  /**
   * Checks a read-write lock's name: not blank, and {@code checkResource} accepts it.
   *
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException if {@code name} is blank or the store refuses it
   */
  public static void checkReadWriteName(String name, Consumer<String> checkResource) {
    requireNotBlank(name);
    try {
      checkResource.accept(name);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("name: " + e.getMessage(), e);
    }
  }

  private static String requireNotBlank(String name) {
    if (Objects.requireNonNull(name, "name must not be null").isBlank()) {
      throw new IllegalArgumentException("name must not be blank, was '" + name + "'");
    }
    return name;
  }
}
