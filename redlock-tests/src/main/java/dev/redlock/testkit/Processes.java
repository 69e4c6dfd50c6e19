package dev.redlock.testkit;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** Every redis-server this JVM started, killed on JVM exit even when a test forgot to close. */
final class Processes {
  private static final Set<Process> STARTED = ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> STARTED.forEach(Process::destroyForcibly), "redlock-testkit-reaper"));
  }

  private Processes() {}

  static void register(Process p) {
    STARTED.add(p);
  }

  static void unregister(Process p) {
    STARTED.remove(p);
  }
}
