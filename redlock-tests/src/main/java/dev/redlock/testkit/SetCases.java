package dev.redlock.testkit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** {@link LeaseContract}'s cases: several resources at once, all or nothing. */
abstract class SetCases extends CloseCases {
  // ---- several resources at once, all or nothing --------------------------------------------

  /** {@code names} as resources of this test, in the order given (a set that keeps it). */
  Set<String> resources(String... names) {
    Set<String> set = new LinkedHashSet<>();
    for (String name : names) {
      set.add(resource(name));
    }
    return set;
  }

  /** Asserts, where the store can be looked at, that no part of it holds {@code resource}. */
  void assertNowhere(String resource, String why) {
    long places = placesHolding(resource);
    assertTrue(places <= 0, why + ": " + resource + " is held on " + places + " part(s)");
  }

  /** Waits, where the store can be looked at, until every part of it holds {@code resource}. */
  void awaitEverywhere(String resource) {
    if (placesHolding(resource) >= 0) {
      await(resource + " held on every part of the store")
          .atMost(NO_HANG)
          .until(() -> placesHolding(resource) == nodeNames().size());
    }
  }

  /**
   * One resource of a set held elsewhere: the set is refused as contention, and none of the others
   * is left taken on any part of the store (inspected directly), at once; the rest of the set is
   * free to anyone, and the whole set is granted once the one is released.
   */
  @Test
  void aSetWithOneResourceHeldElsewhereTakesNothing() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Set<String> set = resources("all-a", "all-b-held", "all-c");
    Lease held = a.acquire(resource("all-b-held"), LONG_TTL, NO_HANG);
    awaitEverywhere(
        resource("all-b-held")); // so every node refuses: none can have taken the others
    assertEquals(Optional.empty(), b.tryAcquireAll(set, LONG_TTL), "one of the set is held");
    assertNowhere(resource("all-a"), "a refused set left a resource taken");
    assertNowhere(resource("all-c"), "a refused set left a resource taken");
    LockUnavailableException busy =
        assertThrows(
            LockUnavailableException.class,
            () -> b.acquireAll(set, LONG_TTL, TIMING.scaled(Duration.ofMillis(200))));
    assertEquals(LockUnavailableException.Reason.HELD_ELSEWHERE, busy.reason(), busy.toString());
    assertNowhere(resource("all-a"), "a refused acquireAll left a resource taken");
    assertNowhere(resource("all-c"), "a refused acquireAll left a resource taken");
    client()
        .tryAcquireAll(resources("all-a", "all-c"), LONG_TTL)
        .orElseThrow(() -> new AssertionError("the rest of the set is free"))
        .release();
    held.release();
    Lease all =
        b.tryAcquireAll(set, LONG_TTL)
            .orElseThrow(() -> new AssertionError("the whole set once the one is released"));
    assertEquals(set.stream().sorted().toList(), all.resources());
    assertEquals(all.resources().toString(), all.resource(), "the label is the sorted set");
    all.release();
  }

  /**
   * A lease of one resource and a lease of a set holding it exclude each other, both ways; a set
   * that does not overlap is granted beside them.
   */
  @Test
  void aSingleLockAndASetHoldingItExcludeEachOther() throws Exception {
    Redlock a = client();
    Redlock b = client();
    String one = resource("x-one");
    String two = resource("x-two");
    Lease single = a.acquire(one, LONG_TTL, NO_HANG);
    assertTrue(b.tryAcquireAll(resources("x-one", "x-two"), LONG_TTL).isEmpty(), "single first");
    assertNowhere(two, "a set refused for its other resource took this one");
    single.release();
    Lease set = b.tryAcquireAll(resources("x-two", "x-one"), LONG_TTL).orElseThrow();
    assertTrue(refused(a, one), "the set holds its first resource against a single lock");
    assertTrue(refused(a, two), "and its second");
    assertTrue(
        a.tryAcquireAll(resources("x-two", "x-three"), LONG_TTL).isEmpty(), "overlapping sets");
    Lease beside = a.tryAcquireAll(resources("x-three", "x-four"), LONG_TTL).orElseThrow();
    assertTrue(set.isValid() && beside.isValid(), "disjoint sets are held side by side");
    set.release();
    beside.release();
    assertFalse(refused(a, one), "released: free");
    assertFalse(refused(a, two), "released: free");
  }

  /**
   * Each resource's token in a set is larger than the last holder's token of that resource alone,
   * and the next holder of it alone gets a larger one still; a resource the lease does not hold has
   * no token in it.
   */
  @Test
  void aSetHasATokenPerResourceLargerThanItsPreviousHolders() throws Exception {
    Redlock a = client();
    String one = resource("t-one");
    String two = resource("t-two");
    Lease first = a.acquire(one, LONG_TTL, NO_HANG);
    first.release();
    Lease second = a.acquire(two, LONG_TTL, NO_HANG);
    second.release();
    Lease set = a.acquireAll(Set.of(one, two), LONG_TTL, NO_HANG);
    assertTrue(set.fencingToken(one) > first.fencingToken(), "larger than the last of " + one);
    assertTrue(set.fencingToken(two) > second.fencingToken(), "larger than the last of " + two);
    assertEquals(
        Math.max(set.fencingToken(one), set.fencingToken(two)),
        set.fencingToken(),
        "fencingToken() is the set's one token");
    assertThrows(IllegalArgumentException.class, () -> set.fencingToken(resource("t-other")));
    assertThrows(NullPointerException.class, () -> set.fencingToken(null));
    set.release();
    Lease after = a.acquire(one, LONG_TTL, NO_HANG);
    assertTrue(after.fencingToken() > set.fencingToken(one), "the next holder's is larger still");
    after.release();
  }

  /**
   * {@code extend} moves the whole set's life forward in the store (each resource is still refused
   * to another client past the first ttl), and {@code release} gives every one back at once.
   */
  @Test
  void aSetIsExtendedAndReleasedAsOne() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Set<String> set = resources("e-one", "e-two", "e-three");
    Lease lease = a.tryAcquireAll(set, shortTtl()).orElseThrow();
    Duration longer = atMostMaxTtl(TIMING.scaled(Duration.ofSeconds(30)));
    assertTrue(lease.extend(longer), "a quorum extended every key");
    assertTrue(lease.extend(shortTtl()), "a shorter extend shortens nothing, and holds");
    assertThroughout(
        shortTtl().plus(TIMING.scaled(Duration.ofMillis(500))),
        "the store kept every resource of the extended set past its first ttl",
        () -> set.stream().allMatch(r -> refused(b, r)));
    lease.release();
    for (String r : set) {
      awaitNothingKept(r);
      assertFalse(refused(b, r), "released as one: " + r + " is free at once");
    }
    assertThrows(IllegalStateException.class, () -> lease.extend(LONG_TTL));
  }

  /** A set left to expire gives every resource back, in the store, with nothing left behind. */
  @Test
  void anExpiredSetGivesEveryResourceBack() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Set<String> set = resources("x-left", "x-mid", "x-right");
    Lease lease = a.tryAcquireAll(set, shortTtl()).orElseThrow();
    waitOut(lease);
    for (String r : set) {
      Lease next =
          await(r + " is free once the set expired")
              .atMost(NO_HANG)
              .until(() -> b.tryAcquire(r, LONG_TTL), Optional::isPresent)
              .orElseThrow();
      assertTrue(next.fencingToken() > lease.fencingToken(r), "tokens grow past the expired set");
      next.release();
    }
  }

  /** withLockAll renews the whole set while the task runs and releases it after. */
  @Test
  void withLockAllRenewsTheSetWhileTheTaskRuns() throws Exception {
    Redlock a = client();
    Redlock b = client();
    Set<String> set = resources("w-one", "w-two");
    Duration ttl = shortTtl();
    String result =
        a.withLockAll(
            set,
            ttl,
            NO_HANG,
            lease -> {
              long until = System.nanoTime() + ttl.multipliedBy(2).toNanos();
              while (System.nanoTime() < until) {
                for (String r : set) {
                  assertTrue(b.tryAcquire(r, LONG_TTL).isEmpty(), r + " still held");
                }
                lease.checkValid();
                LockSupport.parkNanos(ttl.toNanos() / 4);
              }
              return "done";
            });
    assertEquals("done", result);
    b.tryAcquireAll(set, LONG_TTL)
        .orElseThrow(() -> new AssertionError("withLockAll released the set"))
        .release();
  }

  /**
   * 3 clients × 4 threads ask for overlapping sets of 4 resources in opposite orders (and for
   * single resources among them), each waiting with {@code acquireAll}: every thread finishes in
   * bounded time (no deadlock, no starvation), and the history checker finds at most one holder per
   * resource at any time and each resource's tokens growing in grant order.
   */
  @Test
  void overlappingSetsInOppositeOrdersNeverDeadlockNorDoubleGrant() throws Exception {
    List<List<String>> asks =
        List.of(
            List.of("o-0", "o-1", "o-2"),
            List.of("o-2", "o-1", "o-0"),
            List.of("o-3", "o-1"),
            List.of("o-1", "o-3"),
            List.of("o-0", "o-3"),
            List.of("o-2"));
    int clientsCount = 3;
    int threadsPerClient = 4;
    int rounds = 8;
    History history = new History();
    AtomicInteger grants = new AtomicInteger();
    Duration maxWait = TIMING.scaled(Duration.ofSeconds(60));
    onThreadsOfClients(
        clientsCount,
        threadsPerClient,
        client -> client,
        (s, who, first) -> {
          for (int i = 0; i < rounds; i++) {
            List<String> names = asks.get((first + i) % asks.size());
            Set<String> set = resources(names.toArray(new String[0]));
            try (Lease lease =
                set.size() == 1
                    ? s.acquire(set.iterator().next(), LONG_TTL, maxWait)
                    : s.acquireAll(set, LONG_TTL, maxWait)) {
              history.granted(who, lease);
              assertTrue(lease.isValid());
              history.foundValid(who, lease);
              grants.incrementAndGet();
              history.released(who, lease);
            }
          }
        });
    assertEquals(List.of(), HistoryChecker.violations(history));
    assertEquals(clientsCount * threadsPerClient * rounds, grants.get());
    for (String name : List.of("o-0", "o-1", "o-2", "o-3")) {
      assertFalse(refused(client(), resource(name)), "every lease was released");
      awaitNothingKept(resource(name));
    }
  }

  @Test
  void badSetsAreRefusedEarlyWithTheRule() {
    Redlock a = client();
    Duration ttl = shortTtl();
    assertRule(() -> a.tryAcquireAll(Set.of(), ttl), "resources must not be empty");
    Set<String> many = new java.util.TreeSet<>();
    for (int i = 0; i <= Redlock.MAX_RESOURCES; i++) {
      many.add(resource("many-" + i));
    }
    assertRule(
        () -> a.tryAcquireAll(many, ttl),
        "resources must hold at most " + Redlock.MAX_RESOURCES + " names, was 65");
    assertRule(
        () -> a.tryAcquireAll(Set.of(resource("ok"), " "), ttl),
        "resources must not contain a blank name");
    // A set whose equality is not String's: it holds one name twice.
    Set<String> twice = new java.util.TreeSet<>((x, y) -> x.equals(y) ? 1 : x.compareTo(y));
    twice.add(resource("twice"));
    twice.add(resource("twice"));
    assertRule(() -> a.tryAcquireAll(twice, ttl), "resources must not hold a name twice");
    // A name every store refuses: too long for a table's key, and with the nodes' reserved mark.
    assertRule(
        () -> a.tryAcquireAll(Set.of(resource("ok"), "@" + "x".repeat(300)), ttl), "resources: ");
    Set<String> withNull = new java.util.HashSet<>(java.util.Arrays.asList(resource("ok"), null));
    NullPointerException nulls =
        assertThrows(NullPointerException.class, () -> a.tryAcquireAll(withNull, ttl));
    assertEquals("resources must not contain null", nulls.getMessage());
    assertThrows(NullPointerException.class, () -> a.tryAcquireAll(null, ttl));
    assertRule(() -> a.tryAcquireAll(resources("a", "b"), Duration.ZERO), "ttl must be > 0");
    assertRule(
        () -> a.acquireAll(resources("a", "b"), ttl, Duration.ofMillis(-1)),
        "maxWait must be >= 0");
    for (String r : List.of("a", "b", "ok", "twice")) {
      assertNowhere(resource(r), "a refused request took something");
    }
  }

  static void assertRule(Executable call, String startsWith) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().startsWith(startsWith), e.getMessage());
  }
}
