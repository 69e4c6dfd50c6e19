package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.admin.RedlockAdmin;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.util.SafeEncoder;

/**
 * A lock node whose data is replaced while it keeps running, one way per {@link Replacement}: A
 * holds a lock on a bare majority {M, N1} (N2 briefly held by another owner); M's data is replaced;
 * B asks while N1 is frozen, so M's vote decides. With the guard, M answers QUARANTINED and B is
 * refused while A is valid; with the guard off, the same run grants the lock twice (but for {@link
 * Replacement#DEBUG_RELOAD}, which saves before it reloads and loses nothing): each case shows it
 * can fail. On Redis 7 and 6.2; a fourth node is the spare that M resyncs from.
 */
@Tag("full") // About a minute: the full tier (RestartGuardIT covers the guard in the default).
class DataReplacedIT {
  static final Duration MAX_TTL = Duration.ofSeconds(3);
  static final String RESOURCE = "pay";
  static final String PREFIX = RedlockConfig.DEFAULT_KEY_PREFIX;

  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  /** Each way M's data is replaced: what runs before A's grant, and the replacement after it. */
  enum Replacement {
    /**
     * The failover and failback: a spare R synced from M and cut loose (a replica promoted
     * while M was partitioned from it); after A's grant, M resyncs from R (a full sync: a copy of
     * M's own older data) and is promoted back ({@code REPLICAOF NO ONE}).
     */
    FULL_RESYNC_AND_PROMOTION {
      @Override
      Object before(RedisNode m, RedisNode spare) {
        follow(spare, m);
        return command(spare, "REPLICAOF", "NO", "ONE");
      }

      @Override
      void replace(RedisNode m, RedisNode spare, Object memo) {
        follow(m, spare);
        command(m, "REPLICAOF", "NO", "ONE");
      }
    },
    /** {@code DEBUG RELOAD NOSAVE}: the dump saved before A's grant, loaded in place. */
    DEBUG_RELOAD_NOSAVE {
      @Override
      Object before(RedisNode m, RedisNode spare) {
        return command(m, "SAVE");
      }

      @Override
      void replace(RedisNode m, RedisNode spare, Object memo) {
        command(m, "DEBUG", "RELOAD", "NOSAVE");
      }
    },
    /** {@code DEBUG RELOAD} saves first: nothing is lost; the guard keeps the node out anyway. */
    DEBUG_RELOAD {
      @Override
      void replace(RedisNode m, RedisNode spare, Object memo) {
        command(m, "DEBUG", "RELOAD");
      }
    },
    /**
     * {@code DEBUG LOADAOF}: the AOF, switched on before A's grant, reloaded in place; it holds
     * every write, so nothing is lost.
     */
    DEBUG_LOADAOF {
      @Override
      Object before(RedisNode m, RedisNode spare) {
        command(m, "CONFIG", "SET", "appendonly", "yes");
        await()
            .atMost(Duration.ofSeconds(10))
            .until(
                () -> {
                  try (Jedis jedis = Admin.on(m)) {
                    String info = jedis.info("persistence");
                    return info.contains("aof_rewrite_in_progress:0")
                        && info.contains("aof_rewrite_scheduled:0")
                        && info.contains("aof_enabled:1");
                  }
                });
        return null;
      }

      @Override
      void replace(RedisNode m, RedisNode spare, Object memo) {
        command(m, "DEBUG", "LOADAOF");
      }
    },
    FLUSHALL {
      @Override
      void replace(RedisNode m, RedisNode spare, Object memo) {
        command(m, "FLUSHALL");
      }
    },
    FLUSHDB {
      @Override
      void replace(RedisNode m, RedisNode spare, Object memo) {
        command(m, "FLUSHDB");
      }
    },
    /**
     * Every key dumped before A's grant, then a flush and a RESTORE of them all, marker included.
     */
    RESTORE_AFTER_FLUSH {
      @Override
      Object before(RedisNode m, RedisNode spare) {
        Map<String, byte[]> dumped = new HashMap<>();
        try (Jedis jedis = Admin.on(m)) {
          for (String key : jedis.keys("*")) {
            dumped.put(key, jedis.dump(key));
          }
        }
        return dumped;
      }

      @Override
      @SuppressWarnings("unchecked")
      void replace(RedisNode m, RedisNode spare, Object dumped) {
        try (Jedis jedis = Admin.on(m)) {
          jedis.flushAll();
          ((Map<String, byte[]>) dumped).forEach((key, value) -> jedis.restore(key, 0, value));
        }
      }
    },
    /**
     * The marker's value read before A's grant and SET back by hand after a flush, with a witness.
     */
    MARKER_SET_AFTER_FLUSH {
      @Override
      Object before(RedisNode m, RedisNode spare) {
        return Admin.get(m, PREFIX + "@life");
      }

      @Override
      void replace(RedisNode m, RedisNode spare, Object marker) {
        try (Jedis jedis = Admin.on(m)) {
          jedis.flushAll();
          jedis.set(PREFIX + "@life", (String) marker);
          jedis.set(PREFIX + "@witness", "w");
        }
      }
    },
    /**
     * Another deployment's guard keys (key prefix {@code other:}, vouched for on the same process)
     * renamed into this one's place, after this one's keys were deleted.
     */
    RENAMED_FROM_ANOTHER_PREFIX {
      @Override
      Object before(RedisNode m, RedisNode spare) {
        NodeData.vouchForNewNode(m, "other:");
        return null;
      }

      @Override
      void replace(RedisNode m, RedisNode spare, Object memo) {
        try (Jedis jedis = Admin.on(m)) {
          jedis.del(jedis.keys(PREFIX + "*").toArray(String[]::new));
          jedis.rename("other:@life", PREFIX + "@life");
          jedis.rename("other:@witness", PREFIX + "@witness");
        }
      }
    },
    /**
     * Database 1 holds another deployment's lock data, vouched for on the same process, so its
     * marker would let it vote at once; after A's grant, {@code SWAPDB 0 1} puts it where A's
     * clients look.
     */
    SWAPDB {
      @Override
      Object before(RedisNode m, RedisNode spare) {
        try (RedlockAdmin admin =
                RedlockAdmin.create(
                    RedlockConfig.builder()
                        .nodes(List.of(m.uri() + "/1"))
                        .maxTtl(MAX_TTL)
                        .build());
            Jedis jedis = Admin.on(m)) {
          return admin.vouchForNewNode(0, NodeData.runId(jedis), "DataReplacedIT");
        }
      }

      @Override
      void replace(RedisNode m, RedisNode spare, Object memo) {
        command(m, "SWAPDB", "0", "1");
      }
    };

    /** Runs before A's grant; returns what {@link #replace} needs, if anything. */
    Object before(RedisNode m, RedisNode spare) {
      return null;
    }

    abstract void replace(RedisNode m, RedisNode spare, Object memo);

    boolean losesData() {
      return this != DEBUG_RELOAD && this != DEBUG_LOADAOF;
    }
  }

  static Stream<Arguments> cases() {
    return Stream.of("redis-7", "redis-6.2")
        .flatMap(binary -> Stream.of(Replacement.values()).map(r -> Arguments.of(binary, r)));
  }

  RedisNodes nodes;

  Redlock client(boolean guard) {
    return client(guard, false);
  }

  /** A client of the three lock nodes (the fourth is the spare). */
  Redlock client(boolean guard, boolean trustFsyncedAofRestarts) {
    return redis.client(
        StaleRestartIT.config(nodes.uris().subList(0, 3), MAX_TTL, guard, trustFsyncedAofRestarts));
  }

  /** What B got, asking once while A's lease is valid and N1 (which holds A's key) is frozen. */
  record Outcome(boolean granted, NodeOutcome m) {}

  Outcome run(String binary, Replacement replacement, boolean guard) throws Exception {
    nodes = redis.start(RedisFixture.nodes(4).binary(StaleRestartIT.binary(binary)));
    RedisNode m = nodes.node(0);
    RedisNode n1 = nodes.node(1);
    RedisNode n2 = nodes.node(2);
    RedisNode spare = nodes.node(3);
    for (RedisNode node : List.of(m, spare)) {
      command(node, "CONFIG", "SET", "repl-diskless-sync-delay", "0"); // 5 s by default on 7
    }
    Redlock a = client(true);
    a.acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5)).release(); // counters written
    await()
        .atMost(MAX_TTL)
        .until(() -> nodes.all().stream().allMatch(n -> Admin.get(n, PREFIX + RESOURCE) == null));
    Object memo = replacement.before(m, spare);
    // N2 briefly held by another owner: A wins on {M, N1}, a bare majority.
    try (Jedis jedis = Admin.on(n2)) {
      jedis.psetex(PREFIX + RESOURCE, 500, "another owner");
    }
    Lease lease = a.acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5));
    assertEquals(NodeOutcome.Status.OK, lease.nodeOutcomes().get(0).status(), "M voted for A");
    await().atMost(Duration.ofSeconds(2)).until(() -> Admin.get(n2, PREFIX + RESOURCE) == null);
    replacement.replace(m, spare, memo);
    n1.pause();
    try {
      Redlock b = client(guard);
      try {
        Optional<Lease> won = b.tryAcquire(RESOURCE, MAX_TTL);
        boolean overlap = won.isPresent() && lease.isValid();
        won.ifPresent(Lease::release);
        return new Outcome(overlap, won.map(l -> l.nodeOutcomes().get(0)).orElse(null));
      } catch (LockUnavailableException e) {
        assertTrue(lease.isValid(), "A is still valid: the answer means something");
        return new Outcome(false, e.nodeOutcomes().get(0));
      }
    } finally {
      n1.resume();
    }
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("cases")
  void theGuardKeepsTheReplacedNodeOut(String binary, Replacement replacement) throws Exception {
    Outcome o = run(binary, replacement, true);
    assertFalse(o.granted(), "B was granted the lock while A still held it: " + o);
    assertEquals(NodeOutcome.Status.QUARANTINED, o.m().status(), o.toString());
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("cases")
  void withTheGuardOffTheReplacedNodeGrantsTwice(String binary, Replacement replacement)
      throws Exception {
    Outcome o = run(binary, replacement, false);
    assertEquals(replacement.losesData(), o.granted(), o.toString());
  }

  static Stream<Arguments> durableCases() {
    return Stream.of("redis-7", "redis-6.2")
        .flatMap(
            binary ->
                Stream.of(
                        Replacement.FULL_RESYNC_AND_PROMOTION,
                        Replacement.DEBUG_RELOAD_NOSAVE,
                        Replacement.RESTORE_AFTER_FLUSH)
                    .map(r -> Arguments.of(binary, r)));
  }

  /**
   * With {@link RestartGuard#TRUST_FSYNCED_AOF_RESTARTS}: M restarts from its AOF (fsynced on every
   * write, so nothing is lost) and a client's first acquire keeps its marker's epoch, as it should;
   * then, within maxTtl of the restart, M's data is replaced by a copy from before A's grant, which
   * holds a durable marker of M's earlier life. The same connection, which read when it was made
   * that M loaded its AOF, asks again: the guard reads M's role, AOF state and the commands it ran
   * again, and keeps it out. Planted (the facts the connection read, trusted; the commands not
   * read): B is granted the lock while A holds it.
   */
  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("durableCases")
  void aDurableRestartWhoseDataIsReplacedWithinMaxTtlIsNotTrustedAgain(
      String binary, Replacement replacement) throws Exception {
    nodes =
        redis.start(
            RedisFixture.nodes(4)
                .binary(StaleRestartIT.binary(binary))
                .persistence(dev.redlock.testkit.Persistence.AOF));
    RedisNode m = nodes.node(0);
    RedisNode n1 = nodes.node(1);
    RedisNode n2 = nodes.node(2);
    RedisNode spare = nodes.node(3);
    for (RedisNode node : List.of(m, spare)) {
      command(node, "CONFIG", "SET", "repl-diskless-sync-delay", "0");
    }
    Redlock a = client(true, true);
    a.acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5)).release();
    await()
        .atMost(MAX_TTL)
        .until(() -> nodes.all().stream().allMatch(n -> Admin.get(n, PREFIX + RESOURCE) == null));
    Object memo = replacement.before(m, spare);
    try (Jedis jedis = Admin.on(n2)) {
      jedis.psetex(PREFIX + RESOURCE, 500, "another owner");
    }
    Lease lease = a.acquire(RESOURCE, MAX_TTL, Duration.ofSeconds(5));
    assertEquals(NodeOutcome.Status.OK, lease.nodeOutcomes().get(0).status(), "M voted for A");
    await().atMost(Duration.ofSeconds(2)).until(() -> Admin.get(n2, PREFIX + RESOURCE) == null);
    m.restart(dev.redlock.testkit.Persistence.AOF);
    Redlock b = client(true, true);
    n1.pause();
    try {
      // M's first acquire after its restart: its epoch kept (it lost nothing), so it votes.
      Lease other = b.acquire("other", MAX_TTL, Duration.ofSeconds(5));
      assertEquals(NodeOutcome.Status.OK, other.nodeOutcomes().get(0).status(), "adopted");
      other.release();
    } finally {
      n1.resume();
    }
    replacement.replace(m, spare, memo);
    n1.pause();
    try {
      LockUnavailableException refused =
          org.junit.jupiter.api.Assertions.assertThrows(
              LockUnavailableException.class, () -> b.tryAcquire(RESOURCE, MAX_TTL));
      assertTrue(lease.isValid(), "A is still valid: the answer means something");
      assertEquals(
          NodeOutcome.Status.QUARANTINED,
          refused.nodeOutcomes().get(0).status(),
          refused.getMessage());
    } finally {
      n1.resume();
    }
  }

  static Object command(RedisNode node, String command, String... args) {
    try (Jedis jedis = Admin.on(node)) {
      return jedis.sendCommand(() -> SafeEncoder.encode(command), args);
    }
  }

  /** Makes {@code replica} a replica of {@code master} and waits until it has synced. */
  static void follow(RedisNode replica, RedisNode master) {
    command(replica, "REPLICAOF", "127.0.0.1", Integer.toString(master.port()));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              try (Jedis jedis = Admin.on(replica)) {
                return jedis.info("replication").contains("master_link_status:up");
              }
            });
  }
}
