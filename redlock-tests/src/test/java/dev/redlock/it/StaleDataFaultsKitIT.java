package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.AofMark;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.Nemesis;
import dev.redlock.testkit.Nemesis.Fault;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Snapshot;
import dev.redlock.testkit.Tools;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import redis.clients.jedis.Jedis;

/**
 * The kit's faults of issue 12 ("nodes that come back with older data must not vote"), checked
 * against real nodes with Jedis, on the installed Redis (7.x) and on the Redis 6.2 binary of
 * embedded-redis: each fault does what it says. The lock itself is not involved.
 */
class StaleDataFaultsKitIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.manual();

  /** The two binaries the kit supports, by name (resolved inside the test, for skip or fail). */
  enum Binary {
    INSTALLED(RedisBinary::locate),
    EMBEDDED_62(RedisBinary::embedded);

    private final Supplier<RedisBinary> binary;

    Binary(Supplier<RedisBinary> binary) {
      this.binary = binary;
    }

    RedisBinary get() {
      return Tools.requireOrSkip(binary);
    }
  }

  private static RedisNodes start(int count, Binary binary, Persistence persistence) {
    return redis.start(RedisFixture.nodes(count).binary(binary.binary).persistence(persistence));
  }

  private static Jedis on(RedisNode node) {
    return new Jedis("127.0.0.1", node.port(), 5000);
  }

  private static String runId(RedisNode node) {
    return info(node, "server", "run_id");
  }

  private static String info(RedisNode node, String section, String field) {
    try (Jedis jedis = on(node)) {
      for (String line : jedis.info(section).split("\r?\n")) {
        if (line.startsWith(field + ":")) {
          return line.substring(field.length() + 1).trim();
        }
      }
    }
    throw new AssertionError("no " + field + " in INFO " + section + " of " + node);
  }

  private static String config(RedisNode node, String name) {
    try (Jedis jedis = on(node)) {
      return jedis.configGet(name).get(name);
    }
  }

  private static void set(RedisNode node, String key, String value) {
    try (Jedis jedis = on(node)) {
      assertEquals("OK", jedis.set(key, value));
    }
  }

  private static String get(RedisNode node, String key) {
    try (Jedis jedis = on(node)) {
      return jedis.get(key);
    }
  }

  static Stream<Arguments> binariesAndModes() {
    return Stream.of(Binary.values())
        .flatMap(b -> Stream.of(Persistence.values()).map(p -> Arguments.of(b, p)));
  }

  // ---- 1. stock persistence modes

  @ParameterizedTest
  @EnumSource(Binary.class)
  void rdbIsTheStockConfigurationAndARestartLoadsTheLastSnapshot(Binary binary) {
    try (RedisNodes nodes = start(1, binary, Persistence.RDB)) {
      RedisNode node = nodes.node(0);
      assertEquals("3600 1", config(node, "save"));
      assertEquals("no", config(node, "appendonly"));
      set(node, "before", "1");
      node.snapshot();
      set(node, "after", "2");
      node.kill();
      node.restart(Persistence.RDB);
      assertEquals("1", get(node, "before"));
      assertNull(get(node, "after"), "written after the last snapshot: lost with the process");
    }
  }

  @ParameterizedTest
  @EnumSource(Binary.class)
  void aofEverysecKeepsWhatReachedTheFileAcrossAKill(Binary binary) {
    try (RedisNodes nodes = start(1, binary, Persistence.AOF_EVERYSEC)) {
      RedisNode node = nodes.node(0);
      assertEquals("yes", config(node, "appendonly"));
      assertEquals("everysec", config(node, "appendfsync"));
      set(node, "k", "v");
      node.restart(Persistence.AOF_EVERYSEC);
      assertEquals("v", get(node, "k"), "a SIGKILL alone loses nothing on a tmpfs");
    }
  }

  // ---- 2. restart from a snapshot taken earlier

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("binariesAndModes")
  void restartFromASnapshotLosesLaterWritesInANewProcess(Binary binary, Persistence mode) {
    try (RedisNodes nodes = start(1, binary, mode)) {
      RedisNode node = nodes.node(0);
      set(node, "before", "1");
      Snapshot snapshot = node.snapshot();
      assertEquals(node.uri(), snapshot.source());
      String firstLife = runId(node);
      assertEquals(firstLife, snapshot.runId());
      set(node, "after", "2");
      set(node, "before", "changed");

      node.restartFrom(snapshot);

      assertNotEquals(firstLife, runId(node), "a new process: a new run_id");
      assertEquals("1", get(node, "before"), "the snapshot's value, not the later one");
      assertNull(get(node, "after"), "written after the snapshot");
      assertEquals(mode, node.persistence());
      if (mode == Persistence.AOF || mode == Persistence.AOF_EVERYSEC) {
        // Back on its AOF, as an operator would switch it: the loaded data is in the new AOF.
        assertEquals("1", info(node, "persistence", "aof_enabled"));
        assertEquals(mode == Persistence.AOF ? "always" : "everysec", config(node, "appendfsync"));
        node.restart(mode);
        assertEquals("1", get(node, "before"), "the AOF written after the load has the data");
      } else {
        assertEquals("0", info(node, "persistence", "aof_enabled"));
      }
    }
  }

  @ParameterizedTest
  @EnumSource(Binary.class)
  void restartFromRefusesAnotherNodesSnapshot(Binary binary) {
    try (RedisNodes nodes = start(2, binary, Persistence.NONE)) {
      Snapshot other = nodes.node(1).snapshot();
      assertThrows(IllegalArgumentException.class, () -> nodes.node(0).restartFrom(other));
      assertTrue(nodes.node(0).answersPing(), "refused before anything was stopped");
    }
  }

  // ---- 3. restore of a backup

  @ParameterizedTest
  @EnumSource(Binary.class)
  void restoreBackupPutsAnotherNodesDataOnANewProcess(Binary binary) {
    try (RedisNodes nodes = start(2, binary, Persistence.AOF)) {
      RedisNode donor = nodes.node(0);
      RedisNode target = nodes.node(1);
      set(donor, "donor-key", "d");
      set(target, "own-key", "t");
      Snapshot backup = donor.snapshot();
      String targetLife = runId(target);

      target.restoreBackup(backup);

      assertNotEquals(targetLife, runId(target));
      assertEquals("d", get(target, "donor-key"));
      assertNull(get(target, "own-key"), "the node's own data is replaced by the backup");
      assertEquals("1", info(target, "persistence", "aof_enabled"));
      assertEquals("d", get(donor, "donor-key"), "the donor is untouched");
    }
  }

  @Test
  void aRedis7BackupIsRefusedOnRedis62() {
    RedisBinary installed = Binary.INSTALLED.get();
    RedisBinary embedded = Binary.EMBEDDED_62.get();
    if (!installed.version().startsWith("7.")) {
      return; // nothing newer than 6.2 installed: the case does not arise here
    }
    try (RedisNodes seven = redis.start(RedisFixture.nodes(1).binary(() -> installed));
        RedisNodes six = redis.start(RedisFixture.nodes(1).binary(() -> embedded))) {
      Snapshot backup = seven.node(0).snapshot();
      assertThrows(IllegalArgumentException.class, () -> six.node(0).restoreBackup(backup));
    }
  }

  // ---- 4. an AOF that loses its last writes

  @ParameterizedTest
  @EnumSource(Binary.class)
  void restartLosingAofTailLosesTheWritesAfterTheMark(Binary binary) {
    try (RedisNodes nodes = start(1, binary, Persistence.AOF_EVERYSEC)) {
      RedisNode node = nodes.node(0);
      set(node, "before", "1");
      AofMark mark = node.markAof();
      assertTrue(mark.size() > 0, mark.toString());
      assertTrue(
          mark.file()
              .getFileName()
              .toString()
              .endsWith(binary == Binary.EMBEDDED_62 ? "appendonly.aof" : ".aof"),
          mark.toString());
      set(node, "after", "2");
      set(node, "before", "changed");
      String firstLife = runId(node);

      node.restartLosingAofTail(mark);

      assertNotEquals(firstLife, runId(node));
      assertEquals("1", get(node, "before"), "the value acknowledged before the mark");
      assertNull(get(node, "after"), "acknowledged after the mark: lost");
      assertEquals("everysec", config(node, "appendfsync"));
    }
  }

  @Test
  void markAofRefusesNodesThatCannotLoseAnAcknowledgedWrite() {
    try (RedisNodes nodes = redis.start(RedisFixture.nodes(2).persistence(Persistence.AOF))) {
      assertThrows(IllegalStateException.class, () -> nodes.node(0).markAof());
      nodes.node(1).restart(Persistence.NONE);
      assertThrows(IllegalStateException.class, () -> nodes.node(1).markAof());
    }
  }

  // ---- 5. a clock stepped at boot

  @Test
  void aClockSteppedAtBootOnRedis62() {
    RedisBinary embedded = Binary.EMBEDDED_62.get();
    assertTrue(Tools.requireOrSkip(embedded::acceptsFakeClock), "the 6.2 binary takes libfaketime");
    try (RedisNodes nodes =
        redis.start(RedisFixture.nodes(1).binary(() -> embedded).persistence(Persistence.AOF))) {
      RedisNode node = nodes.node(0);
      set(node, "k", "v");
      long pid = node.pid();
      Tools.requireOrSkip(
          () -> {
            node.restart(Persistence.AOF, Duration.ofSeconds(-30));
            return null;
          });
      assertNotEquals(pid, node.pid());
      assertOffset(node, -30_000);
      assertEquals("v", get(node, "k"), "the data survives; only the clock moved");
      node.pause(); // the PID is redis's own: signals reach it
      assertTrue(!node.answersPing());
      node.resume();
      assertTrue(node.answersPing());

      node.restart(Persistence.AOF); // the machine's clock: kept across restarts
      assertEquals(Duration.ofSeconds(-30), node.clockOffset());
      assertOffset(node, -30_000);

      node.restart(Persistence.AOF, Duration.ofSeconds(120));
      assertOffset(node, 120_000);
      node.restart(Persistence.AOF, Duration.ZERO);
      assertOffset(node, 0);
    }
  }

  @Test
  void aClockSteppedAtBootOnTheInstalledRedis() {
    RedisBinary installed = Binary.INSTALLED.get();
    boolean accepts = Tools.requireOrSkip(installed::acceptsFakeClock);
    try (RedisNodes nodes = redis.start(RedisFixture.nodes(1).binary(() -> installed))) {
      RedisNode node = nodes.node(0);
      if (accepts) {
        node.restart(Persistence.NONE, Duration.ofSeconds(-30));
        assertOffset(node, -30_000);
        return;
      }
      // Debian's redis-server 7.0: libfaketime and its shared jemalloc deadlock at start. The kit
      // says so at once rather than waiting out the start timeout.
      IllegalStateException e =
          assertThrows(
              IllegalStateException.class,
              () -> node.restart(Persistence.NONE, Duration.ofSeconds(-30)));
      assertTrue(e.getMessage().contains("libfaketime"), e.getMessage());
      assertEquals(Duration.ZERO, node.clockOffset(), "a failed step leaves the clock as it was");
      node.restart(Persistence.NONE);
      assertOffset(node, 0);
    }
  }

  // ---- 6. the nemesis

  private static FaultyNodes embeddedEverysec(int count) {
    return redis.startBehindProxies(
        RedisFixture.nodes(count)
            .binary(RedisBinary::embedded)
            .persistence(Persistence.AOF_EVERYSEC));
  }

  private static boolean logged(Nemesis nemesis, String text) {
    return nemesis.log().stream().anyMatch(line -> line.contains(text));
  }

  @Test
  void theNemesisDrawsEveryStaleDataFaultOnAMajority() {
    try (FaultyNodes nodes = embeddedEverysec(3)) {
      Nemesis nemesis =
          Tools.requireOrSkip(
              () ->
                  Nemesis.builder(nodes)
                      .seed(1212)
                      .maxFaulty(3) // every node may be faulty at once: a majority
                      .faults(Fault.staleData())
                      .maxClockStep(Duration.ofSeconds(2))
                      .start());
      try (nemesis) {
        await()
            .atMost(Duration.ofSeconds(60))
            .pollInterval(Duration.ofMillis(100))
            .until(
                () ->
                    nemesis.failure().isPresent()
                        || (logged(nemesis, "RESTART_FROM_SNAPSHOT restarted")
                            && logged(nemesis, "RESTORE_BACKUP restored")
                            && logged(nemesis, "AOF_LOST_TAIL restarted")
                            && logged(nemesis, "CLOCK_STEP_AT_BOOT")));
      }
      assertEquals(Optional.empty(), nemesis.failure(), String.join("\n", nemesis.log()));
      assertTrue(nemesis.log().get(0).contains("seed=1212"), nemesis.log().get(0));
      for (RedisNode node : nodes.nodes().all()) {
        assertTrue(node.answersPing(), node + " healed");
        assertTrue(
            node.clockOffset().compareTo(Duration.ofSeconds(-2)) >= 0
                && node.clockOffset().compareTo(Duration.ZERO) <= 0,
            node + ": stepped back, never more than maxClockStep");
        assertOffset(node, node.clockOffset().toMillis());
      }
    }
  }

  @Test
  void theSameSeedDrawsTheSameFirstStaleDataFault() {
    List<String> first = new java.util.ArrayList<>();
    for (long seed : new long[] {77, 77}) {
      try (FaultyNodes nodes = embeddedEverysec(3)) {
        Nemesis nemesis =
            Tools.requireOrSkip(
                () -> Nemesis.builder(nodes).seed(seed).faults(Fault.staleData()).start());
        try (nemesis) {
          await().atMost(Duration.ofSeconds(20)).until(() -> nemesis.log().size() > 1);
        }
        first.add(nemesis.log().get(1).replaceFirst("^\\d+ ", "")); // without its time
      }
    }
    assertEquals(first.get(0), first.get(1));
  }

  @Test
  void aNemesisRefusesStaleDataFaultsNoNodeCanTake() {
    try (FaultyNodes aof =
        redis.startBehindProxies(RedisFixture.nodes(3).persistence(Persistence.AOF))) {
      assertThrows(
          IllegalStateException.class,
          () -> Nemesis.builder(aof).faults(EnumSet.of(Fault.AOF_LOST_TAIL)).start());
      if (!Tools.requireOrSkip(() -> aof.node(0).binary().acceptsFakeClock())) {
        assertThrows(
            IllegalStateException.class,
            () -> Nemesis.builder(aof).faults(EnumSet.of(Fault.CLOCK_STEP_AT_BOOT)).start());
      }
      assertThrows(
          IllegalArgumentException.class,
          () -> Nemesis.builder(aof).maxClockStep(Duration.ofMillis(10)));
      try (Nemesis byDefault = Nemesis.builder(aof).seed(1).start()) {
        assertTrue(
            byDefault.log().get(0).contains("faults=" + Fault.processAndNetwork()),
            byDefault.log().get(0));
      }
    }
  }

  @Test
  void theDefaultFaultsAreTheProcessAndNetworkFaultsOfBefore() {
    assertEquals(
        EnumSet.of(
            Fault.FREEZE_PROCESS,
            Fault.KILL_RESTART,
            Fault.CUT_LINK,
            Fault.FREEZE_LINK,
            Fault.SLOW_LINK,
            Fault.PARTITION),
        Fault.processAndNetwork());
    // Every fault is in one of the sets: process and network, server stall (issue 13), stale data.
    EnumSet<Fault> callerSide = EnumSet.copyOf(Fault.processAndNetwork());
    callerSide.add(Fault.STALL_SERVER);
    assertEquals(callerSide, Fault.callerSide());
    assertEquals(EnumSet.complementOf(callerSide), Fault.staleData());
  }

  /** The node's TIME is off real time by {@code expectedMillis}, within 2 s. */
  private static void assertOffset(RedisNode node, long expectedMillis) {
    try (Jedis jedis = on(node)) {
      long before = System.currentTimeMillis();
      List<String> time = jedis.time();
      long after = System.currentTimeMillis();
      long nodeMillis = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
      long offset = nodeMillis - (before + after) / 2;
      assertTrue(
          Math.abs(offset - expectedMillis) < 2000,
          "TIME of " + node + " is " + offset + " ms off real time, expected " + expectedMillis);
    }
  }
}
