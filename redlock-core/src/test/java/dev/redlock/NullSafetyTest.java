package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.internal.Ticker;
import dev.redlock.spi.LeaseStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.commands.HashCommands;
import redis.clients.jedis.commands.ScriptingKeyCommands;

/**
 * The null-safety rule of the public API (docs/design.md, "Null safety"), checked by reflection on
 * every public method and constructor of the exported packages, Guava's {@code NullPointerTester}
 * style: each reference parameter in turn is passed {@code null}, the others a valid value, and the
 * call must throw {@link NullPointerException} at once, with a message naming the parameter ("…
 * must not be null"). A parameter that may be null is listed in {@link #MAY_BE_NULL} with the
 * javadoc that says so; a new public type without an instance here fails the test.
 */
class NullSafetyTest {
  /** Parameters the javadoc allows to be null: "Type.member#index". */
  private static final Set<String> MAY_BE_NULL =
      Set.of(
          // the exceptions' messages and causes, as in java.lang
          "RedlockException.<init>#0",
          "RedlockException.<init>#1",
          "LeaseLostException.<init>#0",
          "LockUnavailableException.<init>#0",
          // record components documented "null when …"
          "LockStatus.Node.<init>#1", // error: null when the node was read
          "RedlockAdmin.GuardView.<init>#2", // marker: null when there is none
          "RedlockAdmin.GuardView.<init>#3", // unknown: null when the node can vote
          "LockStatus.Node.<init>#4", // owner hash: null when free
          "ReadWriteStatus.Node.<init>#1", // error: null when the node was read
          "ReadWriteStatus.Node.<init>#4", // writer hash: null when no writer
          "NewNodeCheck.<init>#6", // markerBefore: null when there was none
          "NewNodeCheck.<init>#7", // markerWritten: null when nothing was written
          "LeaseStore.Vote.<init>#0"); // held: null when no node said yes

  /**
   * Types the user implements and the library calls: it never passes them null (their javadoc says
   * what each argument is); an implementation need not check.
   */
  private static final Set<Class<?>> CALLED_BY_THE_LIBRARY =
      Set.of(LeaseStore.class, LeaseStore.Releases.class, LeaseTask.class, RedlockListener.class);

  private final FakeCluster cluster = new FakeCluster();
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
    cluster.close();
  }

  @Test
  void everyPublicMethodRefusesANullArgumentAtOnceNamingIt() throws Exception {
    Redlock redlock =
        cluster.start(
            3, RedlockConfig.builder().nodeTimeout(Duration.ofMillis(100)), Ticker.SYSTEM);
    Lease lease = redlock.tryAcquire("null-safety", Duration.ofSeconds(30)).orElseThrow();
    RedlockConfig config = RedlockConfig.builder().node("redis://127.0.0.1:1").build();
    RedlockAdmin admin = RedlockAdmin.create(config);
    toClose.add(admin);
    Map<Class<?>, Object> instances = new LinkedHashMap<>();
    instances.put(Redlock.class, redlock);
    instances.put(LockService.class, redlock);
    instances.put(Lease.class, lease);
    instances.put(Semaphore.class, redlock.semaphore("null-safety-permits", 2));
    instances.put(ReadWriteLock.Side.class, redlock.readWriteLock("null-safety-rw").writeLock());
    instances.put(RedlockAdmin.class, admin);
    instances.put(RedlockConfig.Builder.class, RedlockConfig.builder());
    instances.put(LockSettings.Builder.class, LockSettings.builder());
    instances.put(RedlockConfig.class, config);
    instances.put(LockSettings.class, config.settings());

    List<String> wrong = new ArrayList<>();
    int checked = 0;
    for (Class<?> type : exportedTypes()) {
      List<Executable> members = membersTakingReferences(type);
      if (members.isEmpty()) {
        continue;
      }
      if (CALLED_BY_THE_LIBRARY.contains(type)) {
        continue;
      }
      Object target = instances.get(type);
      for (Executable member : members) {
        boolean isStatic =
            member instanceof Constructor<?> || Modifier.isStatic(member.getModifiers());
        if (!isStatic && target == null) {
          wrong.add(type.getName() + " has no instance in this test for " + member);
          continue;
        }
        Class<?>[] params = member.getParameterTypes();
        for (int i = 0; i < params.length; i++) {
          if (params[i].isPrimitive() || MAY_BE_NULL.contains(name(type, member, i))) {
            continue;
          }
          checked++;
          String problem = callWithNull(member, isStatic ? null : target, params, i);
          if (problem != null) {
            wrong.add(name(type, member, i) + " " + member + ": " + problem);
          }
        }
      }
    }
    assertEquals(List.of(), wrong);
    assertTrue(checked > 60, "checked only " + checked + " parameters: the scan lost its way");
    assertTrue(lease.isValid(), "the calls with a null must not have touched the lease");
  }

  /** Null where it is allowed is still accepted: the exemptions are real, not blanket. */
  @Test
  void theExemptParametersAcceptNull() {
    assertNotNull(new RedlockException(null).toString());
    assertNotNull(new RedlockException("m", null).toString());
  }

  private static String callWithNull(
      Executable member, Object target, Class<?>[] params, int nullAt) {
    Object[] args = new Object[params.length];
    for (int j = 0; j < params.length; j++) {
      args[j] = j == nullAt ? null : sample(params[j]);
    }
    try {
      if (member instanceof Method m) {
        m.invoke(target, args);
      } else {
        ((Constructor<?>) member).newInstance(args);
      }
      return "accepted null";
    } catch (InvocationTargetException e) {
      Throwable thrown = e.getCause();
      if (!(thrown instanceof NullPointerException)) {
        return "threw " + thrown + " instead of NullPointerException";
      }
      String message = thrown.getMessage();
      if (message == null || !message.endsWith("must not be null")) {
        return "NullPointerException from inside, not a named check: " + message;
      }
      return null;
    } catch (ReflectiveOperationException e) {
      return "could not be called: " + e;
    }
  }

  /** A valid value of {@code type}: what a user would pass. */
  private static Object sample(Class<?> type) {
    Map<Class<?>, Object> samples = new HashMap<>();
    samples.put(int.class, 1);
    samples.put(long.class, 1L);
    samples.put(double.class, 0.5);
    samples.put(boolean.class, false);
    samples.put(String.class, "redis://127.0.0.1:1");
    samples.put(Duration.class, Duration.ofSeconds(30));
    samples.put(Collection.class, List.of("redis://127.0.0.1:1"));
    samples.put(List.class, List.of());
    samples.put(Set.class, Set.of("null-safety-a", "null-safety-b"));
    samples.put(Properties.class, new Properties());
    samples.put(TaskInterruption.class, TaskInterruption.NEVER);
    samples.put(RedlockListener.class, (RedlockListener) event -> {});
    samples.put(LeaseTask.class, (LeaseTask<Object, RuntimeException>) l -> null);
    samples.put(Consumer.class, (Consumer<Object>) x -> {});
    samples.put(RedlockConfig.class, RedlockConfig.builder().node("redis://127.0.0.1:1").build());
    samples.put(LockSettings.class, LockSettings.builder().build());
    samples.put(Throwable.class, new RuntimeException("cause"));
    samples.put(NodeOutcome.Status.class, NodeOutcome.Status.OK);
    samples.put(
        LockUnavailableException.Reason.class, LockUnavailableException.Reason.HELD_ELSEWHERE);
    samples.put(LeaseLostException.Reason.class, LeaseLostException.Reason.EXPIRED);
    samples.put(NewNodeCheck.Verdict.class, NewNodeCheck.Verdict.NEW);
    // A client that never connects: the null must be refused before anything is sent.
    Jedis nowhere = new Jedis("127.0.0.1", 1);
    samples.put(ScriptingKeyCommands.class, nowhere);
    samples.put(HashCommands.class, nowhere);
    Object value = samples.get(type);
    if (value == null && type == LeaseStore.class) {
      value = new FailingStore();
    }
    if (value == null && type == Object.class) {
      value = "x";
    }
    return value;
  }

  private static String name(Class<?> type, Executable member, int index) {
    String owner = type.getName().substring(type.getPackageName().length() + 1).replace('$', '.');
    String memberName = member instanceof Constructor<?> ? "<init>" : member.getName();
    return owner + "." + memberName + "#" + index;
  }

  private static List<Executable> membersTakingReferences(Class<?> type) {
    List<Executable> out = new ArrayList<>();
    List<Executable> all = new ArrayList<>(List.of(type.getDeclaredMethods()));
    all.addAll(List.of(type.getDeclaredConstructors()));
    for (Executable member : all) {
      if (!Modifier.isPublic(member.getModifiers())
          || member.isSynthetic()
          || (member instanceof Method m && (m.isBridge() || isObjectMethod(m)))
          || (member instanceof Method m2 && type.isEnum() && m2.getName().equals("valueOf"))) {
        continue;
      }
      if (Stream.of(member.getParameterTypes()).anyMatch(p -> !p.isPrimitive())) {
        out.add(member);
      }
    }
    return out;
  }

  private static boolean isObjectMethod(Method m) {
    return m.getName().equals("equals") && m.getParameterCount() == 1;
  }

  /** Every public type, top-level or nested, of the exported packages. */
  private static List<Class<?>> exportedTypes() throws ClassNotFoundException {
    List<Class<?>> out = new ArrayList<>();
    for (String pkg : List.of("dev.redlock", "dev.redlock.spi")) {
      Path dir = Path.of("target/classes", pkg.split("\\."));
      try (Stream<Path> files = Files.list(dir)) {
        for (Path file : files.sorted().toList()) {
          String fileName = file.getFileName().toString();
          if (!fileName.endsWith(".class") || fileName.equals("package-info.class")) {
            continue;
          }
          Class<?> type = Class.forName(pkg + "." + fileName.replace(".class", ""));
          if (Modifier.isPublic(type.getModifiers())
              && !type.isAnonymousClass()
              && isPubliclyReachable(type)) {
            out.add(type);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    assertTrue(out.size() > 20, "found only " + out);
    return out;
  }

  private static boolean isPubliclyReachable(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
      if (!Modifier.isPublic(c.getModifiers())) {
        return false;
      }
    }
    return true;
  }

  /** A store whose every verb fails: only its presence is needed, never its answers. */
  private static final class FailingStore implements LeaseStore<LeaseStore.Held> {
    @Override
    public int quorum() {
      return 1;
    }

    @Override
    public int size() {
      return 1;
    }

    @Override
    public void checkResource(String resource) {}

    @Override
    public Vote<Held> take(String resource, String token, long ttlMillis, long startNanos) {
      throw new UnsupportedOperationException();
    }

    @Override
    public dev.redlock.spi.Tally renew(Held held, long ttlMillis) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void giveBack(Held held) {}

    @Override
    public void giveBackAll(List<Held> held) {}

    @Override
    public void close() {}
  }
}
