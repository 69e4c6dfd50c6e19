package dev.redlock.testkit;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Catches double grants as they happen: a holder calls {@link #enter} when its critical section
 * starts and {@link #exit} when it ends; a second holder entering while the first is inside is a
 * violation, recorded with both holders' names.
 */
public final class OverlapDetector {
  private final Map<String, String> inside = new ConcurrentHashMap<>();
  private final List<String> violations = new CopyOnWriteArrayList<>();

  /** Marks {@code holder} inside {@code resource}; records a violation if someone else is. */
  public void enter(String resource, String holder) {
    String other = inside.putIfAbsent(resource, holder);
    if (other != null) {
      violations.add("'" + resource + "' granted to " + holder + " while " + other + " held it");
    }
  }

  /** Marks {@code holder} outside {@code resource}. */
  public void exit(String resource, String holder) {
    inside.remove(resource, holder);
  }

  /** Every overlap seen so far; empty when mutual exclusion held. */
  public List<String> violations() {
    return List.copyOf(violations);
  }
}
