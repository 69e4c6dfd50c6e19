package dev.redlock.testsupport;

import dev.redlock.LeaseLostException;
import dev.redlock.LeaseTask;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.RedlockListener;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.TaskInterruption;
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
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.commands.HashCommands;
import redis.clients.jedis.commands.ScriptingKeyCommands;

/**
 * The null-safety rule of a public API (docs/design.md, "Null safety"), checked by reflection,
 * Guava's {@code NullPointerTester} style: each reference parameter of every public method and
 * constructor in turn is passed {@code null}, the others a valid value, and the call must throw
 * {@link NullPointerException} at once, with a message naming the parameter ("… must not be null").
 * For this module's API ({@code NullSafetyTest}) and for redlock-admin's, through the test-jar.
 */
public final class NullSafetyCheck {
  private final Map<Class<?>, Object> instances;
  private final Set<String> mayBeNull;
  private final Function<Class<?>, Object> more;
  private int checked;

  /**
   * @param instances an instance of each type whose instance methods are checked
   * @param mayBeNull the parameters the javadoc allows to be null: "Type.member#index"
   * @param more valid values of the types the checker does not know (null: none)
   */
  public NullSafetyCheck(
      Map<Class<?>, Object> instances, Set<String> mayBeNull, Function<Class<?>, Object> more) {
    this.instances = instances;
    this.mayBeNull = mayBeNull;
    this.more = more;
  }

  /** What is wrong with {@code types}: one line per parameter that accepts or mishandles null. */
  public List<String> wrongIn(List<Class<?>> types) {
    List<String> wrong = new ArrayList<>();
    for (Class<?> type : types) {
      List<Executable> members = membersTakingReferences(type);
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
          if (params[i].isPrimitive() || mayBeNull.contains(name(type, member, i))) {
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
    return wrong;
  }

  /** How many parameters {@link #wrongIn} passed null to. */
  public int checked() {
    return checked;
  }

  /** Whether {@code type} has a public method or constructor that takes a reference. */
  public static boolean takesReferences(Class<?> type) {
    return !membersTakingReferences(type).isEmpty();
  }

  private String callWithNull(Executable member, Object target, Class<?>[] params, int nullAt) {
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
  private Object sample(Class<?> type) {
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
    samples.put(Throwable.class, new RuntimeException("cause"));
    samples.put(NodeOutcome.Status.class, NodeOutcome.Status.OK);
    samples.put(
        LockUnavailableException.Reason.class, LockUnavailableException.Reason.HELD_ELSEWHERE);
    samples.put(LeaseLostException.Reason.class, LeaseLostException.Reason.EXPIRED);
    // A client that never connects: the null must be refused before anything is sent.
    Jedis nowhere = new Jedis("127.0.0.1", 1);
    samples.put(ScriptingKeyCommands.class, nowhere);
    samples.put(HashCommands.class, nowhere);
    Object value = samples.get(type);
    if (value == null && type == Object.class) {
      value = "x";
    }
    return value != null ? value : more.apply(type);
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

  /** Every public type, top-level or nested, of {@code packages}, compiled into target/classes. */
  public static List<Class<?>> publicTypesOf(String... packages) throws ClassNotFoundException {
    List<Class<?>> out = new ArrayList<>();
    for (String pkg : packages) {
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
}
