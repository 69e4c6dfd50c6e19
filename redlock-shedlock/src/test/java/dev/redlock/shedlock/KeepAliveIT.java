package dev.redlock.shedlock;

import static dev.redlock.shedlock.NodesView.assertThroughout;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.LockEvent;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.Timing;
import java.lang.reflect.Constructor;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.KeepAliveLockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ShedLock's {@link KeepAliveLockProvider} over this provider (it takes only an {@code
 * ExtensibleLockProvider}), on three real redis-server nodes: it extends the lease every half
 * {@code lockAtMostFor}, so a job running longer than that keeps its lock.
 */
@ExtendWith(NoLockLeft.class)
class KeepAliveIT {
  static final Timing TIMING = Timing.get();
  static final Duration NODE_TIMEOUT = TIMING.scaled(Duration.ofMillis(500));

  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  final AtomicInteger extensions = new AtomicInteger();
  ScheduledExecutorService keepAliveThread;
  RedlockLockProvider provider;
  RedlockLockProvider rival;
  NodesView nodes;
  String name;

  @BeforeEach
  void providers() {
    provider =
        redis.closeAfter(
            RedlockLockProvider.create(
                redis.client(
                    redis
                        .config()
                        .nodeTimeout(NODE_TIMEOUT)
                        .listener(
                            event -> {
                              if (event.kind() == LockEvent.Kind.EXTENDED) {
                                extensions.incrementAndGet();
                              }
                            })
                        .build())));
    rival =
        redis.closeAfter(
            RedlockLockProvider.create(
                redis.client(redis.config().nodeTimeout(NODE_TIMEOUT).build())));
    keepAliveThread = Executors.newSingleThreadScheduledExecutor();
    nodes = new NodesView(redis.nodes().uris());
    name = "keep-alive-" + redis.testName();
  }

  @AfterEach
  void stopKeepAlive() throws InterruptedException {
    keepAliveThread.shutdownNow();
    assertTrue(keepAliveThread.awaitTermination(10, TimeUnit.SECONDS));
  }

  static LockConfiguration config(String name, Duration lockAtMostFor) {
    return new LockConfiguration(ClockProvider.now(), name, lockAtMostFor, Duration.ZERO);
  }

  private boolean refusedToRival() {
    Optional<SimpleLock> lock = rival.lock(config(name, Duration.ofSeconds(10)));
    lock.ifPresent(SimpleLock::unlock);
    return lock.isEmpty();
  }

  /**
   * ShedLock's own {@link KeepAliveLockProvider} with a floor on {@code lockAtMostFor} below its
   * public constructor's 30 s, through its package-private constructor (as ShedLock's own tests
   * make it): a job that outlives its {@code lockAtMostFor} then takes seconds, not a minute.
   * Reflection, because this module's tests compile as a named module, which cannot declare a class
   * in shedlock-core's package; they run on the class path, where the constructor opens.
   */
  static KeepAliveLockProvider keepAlive(
      ExtensibleLockProvider provider, ScheduledExecutorService executor, Duration floor)
      throws ReflectiveOperationException {
    Constructor<KeepAliveLockProvider> constructor =
        KeepAliveLockProvider.class.getDeclaredConstructor(
            ExtensibleLockProvider.class, ScheduledExecutorService.class, Duration.class);
    constructor.setAccessible(true);
    return constructor.newInstance(provider, executor, floor);
  }

  @Test
  void aJobRunningTwiceItsLockAtMostForKeepsItsLockAllAlong() throws Throwable {
    Duration atMost = TIMING.scaled(Duration.ofSeconds(4));
    KeepAliveLockProvider keepAlive = keepAlive(provider, keepAliveThread, Duration.ofSeconds(1));
    LockingTaskExecutor.TaskResult<Long> run =
        new DefaultLockingTaskExecutor(keepAlive)
            .executeWithLock(
                () -> {
                  long token = CurrentLock.fencingToken();
                  assertThroughout(
                      atMost.multipliedBy(2),
                      "another instance locked the running job",
                      this::refusedToRival);
                  nodes.assertHeld(name);
                  assertEquals(token, CurrentLock.fencingToken(), "one lease all along");
                  return token;
                },
                config(name, atMost));
    assertTrue(run.wasExecuted());
    assertTrue(extensions.get() >= 3, "extended " + extensions + " times in 2 lockAtMostFor");
    nodes.assertFree(name);
    assertFalse(refusedToRival(), "not free for the next run");
  }

  @Test
  void itsPublicConstructorTakesThisProvider() throws Throwable {
    KeepAliveLockProvider keepAlive = new KeepAliveLockProvider(provider, keepAliveThread);
    assertTrue(
        new DefaultLockingTaskExecutor(keepAlive)
            .executeWithLock(
                () -> {
                  nodes.assertHeld(name);
                  return CurrentLock.fencingToken();
                },
                config(name, Duration.ofSeconds(30)))
            .wasExecuted());
    nodes.assertFree(name);
  }
}
