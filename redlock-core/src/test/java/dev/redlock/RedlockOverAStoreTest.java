package dev.redlock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.config.RedlockConfig;
import dev.redlock.spi.LeaseStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * A store other than Redis goes through the one door: {@link RedlockConfig.Builder#store} and
 * {@link Redlock#create}, which calls the store's function once with {@code nodeTimeout} and owns
 * the store it returns.
 */
class RedlockOverAStoreTest {

  /** Makes {@link MemoryStore}s and remembers each call; named, as a store's function should be. */
  private static final class Stores implements Function<Duration, MemoryStore> {
    final List<MemoryStore> made = new ArrayList<>();

    @Override
    public MemoryStore apply(Duration timeout) {
      MemoryStore store = new MemoryStore(timeout);
      made.add(store);
      return store;
    }

    @Override
    public String toString() {
      return "memory store";
    }
  }

  @Test
  void createCallsTheStoreOnceWithTheNodeTimeoutAndClosesItWithTheRedlock() throws Exception {
    Stores stores = new Stores();
    RedlockConfig config =
        RedlockConfig.builder().store(stores).nodeTimeout(Duration.ofMillis(250)).build();
    assertEquals(List.of(), stores.made, "building the config makes no store");
    Redlock redlock = Redlock.create(config);
    assertEquals(1, stores.made.size());
    MemoryStore store = stores.made.get(0);
    assertEquals(Duration.ofMillis(250), store.timeout());
    assertSame(config, redlock.config());
    assertEquals(Map.of(), redlock.requestsInFlight(), "a store has no nodes");
    assertTrue(
        redlock.toString().startsWith("Redlock{store=memory store, held=0"), redlock.toString());

    Lease lease = redlock.acquire("r", Duration.ofSeconds(10), Duration.ZERO);
    assertTrue(lease.isValid());
    assertTrue(store.holds("r"));
    assertTrue(redlock.tryAcquire("r", Duration.ofSeconds(10)).isEmpty(), "held");
    lease.release();
    assertFalse(store.holds("r"));
    Lease next = redlock.tryAcquire("r", Duration.ofSeconds(10)).orElseThrow();
    assertTrue(next.fencingToken() > lease.fencingToken(), "fencing tokens grow");

    redlock.close();
    assertTrue(store.isClosed(), "the Redlock owns the store");
    assertFalse(store.holds("r"), "close released what was held");
    assertEquals(1, stores.made.size(), "called once");
    assertThrows(IllegalStateException.class, () -> redlock.tryAcquire("r", Duration.ofSeconds(1)));
  }

  @Test
  void aTtlIsCheckedAgainstTheNodeTimeoutAsForRedis() {
    try (Redlock redlock =
        Redlock.create(
            RedlockConfig.builder()
                .store(MemoryStore::new)
                .nodeTimeout(Duration.ofSeconds(1))
                .build())) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> redlock.tryAcquire("r", Duration.ofMillis(900)));
      assertTrue(e.getMessage().startsWith("ttl must be > nodeTimeout"), e.getMessage());
    }
  }

  @Test
  void aStoreFunctionThatReturnsNullOrThrowsFailsCreate() {
    Function<Duration, LeaseStore<?>> none = timeout -> null;
    NullPointerException e =
        assertThrows(
            NullPointerException.class,
            () -> Redlock.create(RedlockConfig.builder().store(none).build()));
    assertTrue(e.getMessage().startsWith("store returned null"), e.getMessage());
    IllegalArgumentException missing = new IllegalArgumentException("table x is missing");
    Function<Duration, LeaseStore<?>> failing =
        timeout -> {
          throw missing;
        };
    assertSame(
        missing,
        assertThrows(
            IllegalArgumentException.class,
            () -> Redlock.create(RedlockConfig.builder().store(failing).build())));
  }
}
