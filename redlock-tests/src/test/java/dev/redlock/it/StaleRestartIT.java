package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import dev.redlock.testkit.AofMark;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Snapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 12's scenarios on real nodes: A holds a lock; a majority of the nodes comes back with data
 * older than A's grant (a restart from an earlier RDB snapshot, the lost tail of an {@code
 * appendfsync everysec} AOF, a backup restored from another node, a clock stepped back at boot);
 * while A's lease is valid, B must not win; once B wins, its token exceeds A's; and B wins within
 * maxTtl and a round of the restart. With the guard off, the same run grants the lock twice (and,
 * with clocks stepped back past maxTtl, hands out a smaller token): the test can fail.
 */
@Tag("full") // About a minute: the full tier (RestartGuardIT covers the guard in the default).
class StaleRestartIT {
  static final Duration MAX_TTL = Duration.ofSeconds(3);
  static final String RESOURCE = "rdb";

  /** Each test's own nodes, and its clients: closed after it. */
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  RedisNodes nodes;

  static Stream<Arguments> topologies() {
    return Stream.of(
        Arguments.of("redis-7", 3), Arguments.of("redis-7", 5),
        Arguments.of("redis-6.2", 3), Arguments.of("redis-6.2", 5));
  }

  static Supplier<RedisBinary> binary(String name) {
    return name.equals("redis-6.2") ? RedisBinary::embedded : RedisBinary::locate;
  }

  void start(String binary, int count, Persistence persistence) {
    nodes = redis.start(RedisFixture.nodes(count).binary(binary(binary)).persistence(persistence));
  }

  Redlock client(boolean guard) {
    return client(guard, false);
  }

  Redlock client(boolean guard, boolean trustFsyncedAofRestarts) {
    return redis.client(config(nodes.uris(), MAX_TTL, guard, trustFsyncedAofRestarts));
  }

  /**
   * A client of {@code uris} that retries every 20-40 ms, with the guard on or off: the one the
   * guard's real-node suites compare.
   */
  static RedlockConfig config(
      List<String> uris, Duration maxTtl, boolean guard, boolean trustFsyncedAofRestarts) {
    RedlockConfig.Builder config =
        RedlockConfig.builder()
            .restartGuard(
                !guard
                    ? RestartGuard.OFF
                    : trustFsyncedAofRestarts
                        ? RestartGuard.TRUST_FSYNCED_AOF_RESTARTS
                        : RestartGuard.ON)
            .nodes(uris)
            .nodeTimeout(Duration.ofMillis(200))
            .retryDelay(Duration.ofMillis(20))
            .retryJitter(Duration.ofMillis(20))
            .maxTtl(maxTtl);
    return config.build();
  }

  /** The nodes that come back with old data: a bare majority, the last ones. */
  List<RedisNode> majority() {
    int n = nodes.size();
    return nodes.all().subList(n - (n / 2 + 1), n);
  }

  /** What B saw while it tried, until it won. */
  record Outcome(long tokenA, long tokenB, boolean bWonWhileAValid, long restartToWinMillis) {}

  /**
   * A holds {@link #RESOURCE}; {@code before} runs first (snapshot, mark), then {@code fault} on
   * every node of the majority; then B tries every 20 ms until it wins.
   */
  Outcome run(boolean guard, Consumer<RedisNode> before, Consumer<RedisNode> fault)
      throws InterruptedException {
    Redlock a = client(true);
    a.acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5)).release(); // markers and counters written
    // A release returns once a quorum confirmed it: wait for the rest, or a snapshot taken next
    // can hold this first lease's key, which a clock stepped back then keeps alive for longer.
    await()
        .atMost(MAX_TTL)
        .until(
            () ->
                nodes.all().stream()
                    .allMatch(
                        n -> Admin.get(n, RedlockConfig.DEFAULT_KEY_PREFIX + RESOURCE) == null));
    majority().forEach(before);
    Lease lease = a.acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5));
    long tokenA = lease.fencingToken();
    majority().forEach(fault);
    long restarted = System.nanoTime();
    assertTrue(lease.isValid(), "A is still valid after the restarts: the test means something");
    Redlock b = client(guard);
    boolean[] overlap = {false};
    Lease won =
        await()
            .atMost(MAX_TTL.multipliedBy(3))
            .pollInterval(Duration.ofMillis(20))
            .until(
                () -> {
                  Optional<Lease> attempt;
                  try {
                    attempt = b.tryAcquire(RESOURCE, MAX_TTL);
                  } catch (LockUnavailableException e) {
                    return null; // quarantined nodes: an outage, not a grant
                  }
                  if (attempt.isPresent() && lease.isValid()) {
                    overlap[0] = true;
                  }
                  return attempt.orElse(null);
                },
                l -> l != null);
    long took = (System.nanoTime() - restarted) / 1_000_000;
    Outcome outcome = new Outcome(tokenA, won.fencingToken(), overlap[0], took);
    won.release();
    return outcome;
  }

  static void assertSafe(Outcome o) {
    assertFalse(o.bWonWhileAValid(), "B was granted the lock while A still held it: " + o);
    assertTrue(o.tokenB() > o.tokenA(), "tokens must grow: " + o);
    assertTrue(
        o.restartToWinMillis() <= MAX_TTL.toMillis() + 1_500,
        "the service came back within maxTtl and a round of the restart: " + o);
  }

  @ParameterizedTest(name = "{0}, {1} nodes")
  @MethodSource("topologies")
  void restartFromAnOlderSnapshot(String binary, int count) throws Exception {
    start(binary, count, Persistence.RDB);
    List<Snapshot> snapshots = new ArrayList<>();
    Outcome o =
        run(
            true,
            node -> snapshots.add(node.snapshot()),
            node -> node.restartFrom(snapshots.get(majority().indexOf(node))));
    assertSafe(o);
  }

  @ParameterizedTest(name = "{0}, {1} nodes")
  @MethodSource("topologies")
  void restartFromAnOlderSnapshotWithTheGuardOffGrantsTwice(String binary, int count)
      throws Exception {
    start(binary, count, Persistence.RDB);
    List<Snapshot> snapshots = new ArrayList<>();
    Outcome o =
        run(
            false,
            node -> snapshots.add(node.snapshot()),
            node -> node.restartFrom(snapshots.get(majority().indexOf(node))));
    assertTrue(o.bWonWhileAValid(), "without the guard the stale majority grants again: " + o);
  }

  @ParameterizedTest(name = "{0}, {1} nodes")
  @MethodSource("topologies")
  void anEverysecAofThatLostItsLastWrites(String binary, int count) throws Exception {
    start(binary, count, Persistence.AOF_EVERYSEC);
    List<AofMark> marks = new ArrayList<>();
    Outcome o =
        run(
            true,
            node -> marks.add(node.markAof()),
            node -> node.restartLosingAofTail(marks.get(majority().indexOf(node))));
    assertSafe(o);
  }

  @ParameterizedTest(name = "{0}, {1} nodes")
  @MethodSource("topologies")
  void aBackupOfAnotherNodeRestored(String binary, int count) throws Exception {
    start(binary, count, Persistence.RDB);
    Snapshot[] backup = new Snapshot[1];
    Outcome o =
        run(
            true,
            node -> {
              if (backup[0] == null) {
                backup[0] = nodes.node(0).snapshot(); // taken before A's grant, on a minority node
              }
            },
            node -> node.restoreBackup(backup[0]));
    assertSafe(o);
  }

  /**
   * With {@link RestartGuard#TRUST_FSYNCED_AOF_RESTARTS}, a durable node restarted from its own AOF
   * keeps its vote: B is refused at once, as busy.
   */
  @ParameterizedTest(name = "{0}, {1} nodes")
  @MethodSource("topologies")
  void aRestartFromAnAofFsyncedOnEveryWriteLosesNothingAndKeepsItsVote(String binary, int count)
      throws Exception {
    start(binary, count, Persistence.AOF);
    Redlock a = client(true, true);
    Lease lease = a.acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5));
    majority().forEach(node -> node.restart(Persistence.AOF));
    long restarted = System.nanoTime();
    // Refused as busy (held elsewhere) rather than failing as quarantined: the nodes vote.
    assertEquals(
        Optional.empty(), client(true, true).tryAcquire(RESOURCE, MAX_TTL), "held, not down");
    lease.release(); // A's connections to the restarted nodes broke: those releases are re-sent
    String key = RedlockConfig.DEFAULT_KEY_PREFIX + RESOURCE;
    await()
        .atMost(Duration.ofSeconds(2))
        .until(() -> nodes.all().stream().allMatch(n -> Admin.get(n, key) == null));
    assertTrue(client(true, true).tryAcquire(RESOURCE, MAX_TTL).isPresent(), "the nodes vote yes");
    assertTrue(
        System.nanoTime() - restarted < MAX_TTL.toNanos(), "sooner than any quarantine could end");
  }

  /**
   * Clocks stepped back at boot by less than maxTtl (libfaketime; the 6.2 binary): the guard and
   * the clock floor still hold. Stepped back by more, with the guard off, both the double grant and
   * a smaller token show.
   */
  @ParameterizedTest(name = "{1} nodes")
  @MethodSource("sixTwo")
  void aSnapshotRestartWithTheClockSteppedBack(String binary, int count) throws Exception {
    start(binary, count, Persistence.RDB);
    Outcome o =
        run(
            true,
            RedisNode::snapshot,
            node -> node.restart(Persistence.RDB, Duration.ofMillis(-1_000)));
    assertSafe(o);
  }

  @ParameterizedTest(name = "{1} nodes")
  @MethodSource("sixTwo")
  void withTheGuardOffAndClocksSteppedBackPastMaxTtlTokensGoBack(String binary, int count)
      throws Exception {
    start(binary, count, Persistence.RDB);
    Outcome o =
        run(
            false,
            RedisNode::snapshot,
            node -> node.restart(Persistence.RDB, MAX_TTL.multipliedBy(-10)));
    assertTrue(o.bWonWhileAValid(), "double grant: " + o);
    assertTrue(o.tokenB() < o.tokenA(), "a smaller token after a stale restart: " + o);
  }

  /**
   * A node whose clock runs 1 s ahead gives A its token; the others lag by that second, less than
   * the ttl, so they are not raised before the grant. A releases, which raises their counters; B,
   * on the other two nodes only, must still get a larger token. (Without the release's raise, B's
   * token would be the lagging clocks', a second smaller.)
   */
  @ParameterizedTest(name = "{1} nodes")
  @MethodSource("sixTwo")
  void aNodeWhoseClockIsAheadCannotMakeALaterTokenSmaller(String binary, int count)
      throws Exception {
    start(binary, count, Persistence.AOF);
    RedisNode fast = nodes.node(count - 1);
    fast.restart(
        Persistence.AOF, Duration.ofSeconds(1)); // ahead by less than the ttl: no eager raise
    // A wins on a bare majority that includes the fast node, so its token is the fast clock's.
    List<RedisNode> others = nodes.all().subList(0, count / 2);
    others.forEach(RedisNode::pause);
    long tokenA;
    try (Lease lease = client(true).acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5))) {
      tokenA = lease.fencingToken();
    }
    others.forEach(RedisNode::resume);
    fast.pause();
    try (Lease lease = client(true).acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5))) {
      assertTrue(lease.fencingToken() > tokenA, lease.fencingToken() + " after " + tokenA);
    } finally {
      fast.resume();
    }
  }

  /**
   * {@code release --force} while the node that gave the holder its token (its clock 1 s ahead)
   * cannot be read: the others lag by that second, and only the force release can raise them. The
   * next token must still be larger.
   */
  @ParameterizedTest(name = "{1} nodes")
  @MethodSource("sixTwo")
  void aForceReleaseThatCannotReadTheHoldersNodeStillKeepsTokensGrowing(String binary, int count)
      throws Exception {
    start(binary, count, Persistence.AOF);
    RedisNode fast = nodes.node(count - 1);
    fast.restart(Persistence.AOF, Duration.ofSeconds(1));
    List<RedisNode> others = nodes.all().subList(0, count / 2);
    others.forEach(RedisNode::pause);
    Lease held = client(true).acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5));
    long tokenA = held.fencingToken();
    others.forEach(RedisNode::resume);
    fast.pause();
    try {
      try (dev.redlock.admin.RedlockAdmin admin =
          dev.redlock.admin.RedlockAdmin.create(
              RedlockConfig.builder()
                  .nodes(nodes.uris())
                  .nodeTimeout(Duration.ofMillis(200))
                  .maxTtl(MAX_TTL)
                  .build())) {
        admin.forceRelease(RESOURCE, "StaleRestartIT");
      }
      try (Lease next = client(true).acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5))) {
        assertTrue(next.fencingToken() > tokenA, next.fencingToken() + " after " + tokenA);
      }
    } finally {
      fast.resume();
    }
  }

  static Stream<Arguments> sixTwo() {
    return Stream.of(Arguments.of("redis-6.2", 3), Arguments.of("redis-6.2", 5));
  }
}
