package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.config.RedlockConfig;
import dev.redlock.spi.LeaseStore;
import dev.redlock.testsupport.NullSafetyCheck;
import dev.redlock.timing.Ticker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

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
    Map<Class<?>, Object> instances = new LinkedHashMap<>();
    instances.put(Redlock.class, redlock);
    instances.put(Lease.class, lease);
    instances.put(Semaphore.class, redlock.semaphore("null-safety-permits", 2));
    instances.put(ReadWriteLock.Side.class, redlock.readWriteLock("null-safety-rw").writeLock());
    instances.put(RedlockConfig.Builder.class, RedlockConfig.builder());
    instances.put(RedlockConfig.class, config);

    NullSafetyCheck check =
        new NullSafetyCheck(
            instances, MAY_BE_NULL, type -> type == LeaseStore.class ? new FailingStore() : null);
    List<Class<?>> types = new ArrayList<>();
    for (Class<?> type : NullSafetyCheck.publicTypesOf("dev.redlock", "dev.redlock.spi")) {
      if (NullSafetyCheck.takesReferences(type) && !CALLED_BY_THE_LIBRARY.contains(type)) {
        types.add(type);
      }
    }
    assertTrue(types.size() > 10, "found only " + types);
    List<String> wrong = check.wrongIn(types);
    int checked = check.checked();
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
    public Vote<Held> take(dev.redlock.spi.LeaseRequest request, long startNanos) {
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
