package dev.redlock.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.Snapshot;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

/**
 * {@code redlock init-nodes} (issue 16, item 6) against three real nodes that are new: emptied and
 * not vouched for before each test, so the restart guard keeps each out of votes for maxTtl (1
 * minute) from a client's first acquisition. And {@code redlock run}'s one line on such nodes.
 */
class InitNodesIT {
  static final Duration NO_HANG = Duration.ofSeconds(30);
  static final String LIFE = RedlockConfig.DEFAULT_KEY_PREFIX + "@life";

  @RegisterExtension
  static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3).unvouched());

  static RedisNodes nodes;
  static String nodeList;

  @BeforeAll
  static void nameTheNodes() {
    nodes = redis.nodes();
    nodeList = String.join(",", nodes.uris());
  }

  /** What one invocation printed and returned, and the audit lines it logged. */
  record Result(int status, String out, String err, String audit) {
    @Override
    public String toString() {
      return "exit "
          + status
          + "\n--- out:\n"
          + out
          + "\n--- err:\n"
          + err
          + "\n--- log:\n"
          + audit;
    }
  }

  /** {@code redlock ARGS} on the class's nodes, reading {@code input} as the operator's answers. */
  static Result redlock(InputStream input, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    // slf4j-simple writes the audit line to System.err itself, not to the CLI's err stream.
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream systemErr = System.err;
    int status;
    System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
    try {
      status =
          RedlockCli.execute(
              args,
              Map.of("REDLOCK_NODES", nodeList),
              input,
              new PrintStream(out, true, StandardCharsets.UTF_8),
              new PrintStream(err, true, StandardCharsets.UTF_8));
    } finally {
      System.setErr(systemErr);
    }
    return new Result(
        status,
        out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8),
        log.toString(StandardCharsets.UTF_8));
  }

  static Result redlock(String input, String... args) {
    return redlock(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), args);
  }

  /**
   * The operator's answers, {@code meanwhile} done once just before the first is read: what happens
   * between the check the command shows and the operator's word.
   */
  static InputStream answersAfter(Runnable meanwhile, String answers) {
    ByteArrayInputStream answered =
        new ByteArrayInputStream(answers.getBytes(StandardCharsets.UTF_8));
    return new InputStream() {
      private boolean done;

      private void once() {
        if (!done) {
          done = true;
          meanwhile.run();
        }
      }

      @Override
      public int read() {
        once();
        return answered.read();
      }

      @Override
      public int read(byte[] b, int off, int len) {
        once();
        return answered.read(b, off, len);
      }
    };
  }

  /** Each node's {@code host:port} on a line: the answers that confirm every node. */
  static String everyAddress() {
    return nodes.all().stream()
        .map(n -> "127.0.0.1:" + n.port() + "\n")
        .collect(Collectors.joining());
  }

  static Jedis on(RedisNode node) {
    return new Jedis("127.0.0.1", node.port());
  }

  static String life(RedisNode node) {
    try (Jedis jedis = on(node)) {
      return jedis.get(LIFE);
    }
  }

  static String runId(RedisNode node) {
    try (Jedis jedis = on(node)) {
      return NodeData.runId(jedis);
    }
  }

  static List<String> lives() {
    List<String> lives = new ArrayList<>();
    nodes.all().forEach(n -> lives.add(life(n)));
    return lives;
  }

  static Redlock client() {
    return redis.client(redis.config().nodeTimeout(Duration.ofMillis(200)).build());
  }

  static void assertSays(String text, String... phrases) {
    for (String phrase : phrases) {
      assertTrue(text.contains(phrase), "'" + phrase + "' missing from:\n" + text);
    }
  }

  // ---- vouching for new nodes

  /**
   * The point of the command: three new nodes, which a client finds quarantined, vote at once once
   * vouched for; keys of another prefix do not make a node "not new".
   */
  @Test
  void newNodesVouchedForVoteAtOnce() {
    Redlock redlock = client();
    LockUnavailableException before =
        assertThrows(
            LockUnavailableException.class,
            () -> redlock.tryAcquire("init:first", Duration.ofSeconds(10)));
    assertTrue(
        before.nodeOutcomes().stream().allMatch(o -> o.status() == NodeOutcome.Status.QUARANTINED),
        "new nodes sit out maxTtl without the command: " + before.getMessage());
    try (Jedis jedis = on(nodes.node(1))) {
      jedis.set("app:settings", "another application's key"); // not of the lock's prefix
    }

    Result r = redlock("", "init-nodes", "--all", "--yes", "--reason", "new cluster, CHG-1");
    assertEquals(0, r.status(), r.toString());
    for (RedisNode node : nodes.all()) {
      String marker = life(node);
      assertEquals(
          runId(node) + ":0:redlock::0:0", marker, "trusted since always, not durable as stamped");
      assertSays(
          r.out(),
          node.uri() + ": new: no key of prefix 'redlock:' but a life marker this process life",
          "vouched for " + node.uri() + ": redlock:@life = " + marker + "; it votes now");
      assertSays(
          r.audit(),
          "WARN dev.redlock.audit - init-node node=" + node.uri() + " by=",
          "reason=\"new cluster, CHG-1\"",
          "result=VOUCHED marker=" + marker);
    }
    assertSays(r.out(), "init-nodes: 3 vouched for, 0 voting already");
    assertEquals("another application's key", get(nodes.node(1), "app:settings"), "untouched");

    Optional<Lease> lease = redlock.tryAcquire("init:first", Duration.ofSeconds(10));
    assertTrue(lease.isPresent(), "a lock at once, not a minute later");
    lease.get().release();

    Result again = redlock("", "init-nodes", "--all", "--yes");
    assertEquals(0, again.status(), again.toString());
    assertSays(again.out(), "init-nodes: every node named votes already; nothing to do");
  }

  /** A node no client has touched has no marker: it is stamped d = 1 (clients lower it). */
  @Test
  void aNodeNoClientHasTouchedIsStampedDurableForClientsToLower() {
    Result r = redlock("", "init-nodes", "--node", "2", "--yes");
    assertEquals(0, r.status(), r.toString());
    assertEquals(runId(nodes.node(1)) + ":0:redlock::1:0", life(nodes.node(1)));
    assertNull(life(nodes.node(0)), "only the node named");
    assertNull(life(nodes.node(2)), "only the node named");
  }

  /**
   * Every key the lock keeps makes a node "not new" — a lease, a fencing counter (tokens must never
   * go back), a life marker of another process life, the previous version's keys — and then nothing
   * is written on any node.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "redlock:settlement",
        "redlock:settlement@fence",
        "redlock:@life",
        "redlock:@witness",
        "redlock:@epoch",
        "redlock:@fences"
      })
  void aNodeWithAnyKeyOfThePrefixIsRefusedAndNothingIsWritten(String key) {
    try (Jedis jedis = on(nodes.node(2))) {
      if (key.endsWith("@fences")) {
        jedis.hset(key, "redlock:settlement", "1764460800000007");
      } else if (key.endsWith("@life")) {
        jedis.set(key, "0123456789abcdef0123456789abcdef01234567:1:1764460800000000");
      } else {
        jedis.set(key, "1764460800000007");
      }
    }
    List<String> before = lives();
    Result r = redlock("", "init-nodes", "--all", "--yes");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    assertSays(r.out(), nodes.node(2).uri() + ": NOT NEW: holds " + key);
    assertSays(r.err(), "nothing written: 1 node(s) not new");
    assertSays(r.audit(), "init-nodes by=", "result=REFUSED", nodes.node(2).uri() + " NOT_NEW");
    assertEquals(before, lives(), "no marker written on any node");
    assertFalse(r.audit().contains("result=VOUCHED"), r.toString());
  }

  @Test
  void withoutTheOperatorsWordNothingIsWritten() {
    Result declined = redlock("nope\n", "init-nodes", "--all");
    assertEquals(ExitCodes.CHECK_FAILED, declined.status(), declined.toString());
    assertSays(declined.out(), "Type the node's host:port (127.0.0.1:" + nodes.node(0).port());
    assertSays(declined.err(), "not confirmed; nothing was changed");

    Result noAnswer = redlock("", "init-nodes", "--all");
    assertEquals(ExitCodes.CHECK_FAILED, noAnswer.status(), noAnswer.toString());

    String twoOfThree = everyAddress().lines().limit(2).collect(Collectors.joining("\n", "", "\n"));
    Result partly = redlock(twoOfThree, "init-nodes", "--all");
    assertEquals(ExitCodes.CHECK_FAILED, partly.status(), "the third was not confirmed");
    assertEquals(List.of(), lives().stream().filter(l -> l != null).toList(), "nothing stamped");

    Result confirmed = redlock(everyAddress(), "init-nodes", "--all");
    assertEquals(0, confirmed.status(), confirmed.toString());
    assertSays(confirmed.out(), "init-nodes: 3 vouched for");
  }

  /**
   * A lock taken on the nodes after the command showed them new, before the operator answered (by a
   * client without the restart guard, the one way a lock lands on a new node): the stamp's own
   * check, on the node, finds it, and nothing is written.
   */
  @Test
  void aLockTakenBetweenTheCheckAndTheAnswerIsCaughtOnTheNode() {
    Redlock unguarded =
        redis.client(
            redis
                .config()
                .restartGuard(RestartGuard.OFF)
                .nodeTimeout(Duration.ofMillis(200))
                .build());
    List<Lease> taken = new ArrayList<>();
    List<String> markers = new ArrayList<>();
    Result r =
        redlock(
            answersAfter(
                () -> {
                  taken.add(unguarded.tryAcquire("init:between", Duration.ofSeconds(20)).get());
                  markers.addAll(lives());
                },
                everyAddress()),
            "init-nodes",
            "--all");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    assertEquals(1, taken.size(), "the lock was taken meanwhile");
    for (RedisNode node : nodes.all()) {
      assertSays(r.out(), node.uri() + ": NOT NEW: holds ", "; nothing written");
    }
    assertSays(r.out(), "init-nodes: 0 vouched for, 0 voting already, 3 refused");
    assertEquals(markers, lives(), "the markers the lock's client wrote, untouched");
    assertTrue(markers.stream().noneMatch(m -> m.endsWith(":0")), markers.toString());
    assertSays(r.audit(), "result=NOT_NEW");
    taken.get(0).release();
  }

  /** A node restarted after the check, before the answer: another life, not the one vouched. */
  @Test
  void aNodeRestartedBetweenTheCheckAndTheAnswerIsRefused() {
    RedisNode restarted = nodes.node(1);
    String shown = runId(restarted);
    Result r =
        redlock(
            answersAfter(() -> restarted.restart(Persistence.NONE), everyAddress()),
            "init-nodes",
            "--all");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    assertFalse(shown.equals(runId(restarted)), "a new process");
    assertSays(r.out(), restarted.uri() + ": RESTARTED since it was shown", "; nothing written");
    assertNull(life(restarted), "nothing written on the restarted node");
    assertEquals(
        runId(nodes.node(0)) + ":0:redlock::1:0", life(nodes.node(0)), "the others were vouched");
    assertSays(r.out(), "init-nodes: 2 vouched for, 0 voting already, 1 refused");
    assertSays(r.audit(), "init-node node=" + restarted.uri(), "result=RESTARTED");
  }

  /**
   * The attacker's case: a node that served locks, restarted from an older snapshot that holds no
   * lease but the resource's fencing counter and the old life's marker. It is refused: vouching
   * would let it vote at once for a lock it forgot, with tokens from a counter gone back.
   */
  @Test
  void aNodeRestartedFromAnOldSnapshotIsRefused() {
    Result vouched = redlock("", "init-nodes", "--all", "--yes");
    assertEquals(0, vouched.status(), vouched.toString());
    Redlock redlock = client();
    redlock.tryAcquire("init:snap", Duration.ofSeconds(10)).orElseThrow().release();
    RedisNode node = nodes.node(0);
    Snapshot old = node.snapshot(); // a counter and the marker, no lease
    node.restartFrom(old);

    Result r = redlock("", "init-nodes", "--node", "1", "--yes");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    assertSays(
        r.out(),
        node.uri() + ": NOT NEW: holds ",
        "redlock:init:snap@fence",
        "redlock:@life",
        "a life marker of another process life, or of data replaced since");
    if (saysKeysLoadedAtStart(node)) { // Redis 6.2 does not say how many keys it loaded
      assertSays(r.out(), "loaded from its data files at start");
    }
    assertTrue(life(node).endsWith(":0"), "the old life's marker, untouched: " + life(node));
    assertFalse(life(node).startsWith(runId(node)), "still the old life's");
  }

  private static boolean saysKeysLoadedAtStart(RedisNode node) {
    try (Jedis jedis = on(node)) {
      return jedis.info("persistence").contains("rdb_last_load_keys_loaded:");
    }
  }

  @Test
  void anUnreachableNodeIsAClearErrorAndNothingIsWritten() {
    Result r =
        redlock(
            "",
            "init-nodes",
            "--nodes",
            nodeList + ",redis://127.0.0.1:1,redis://127.0.0.1:2",
            "--all",
            "--yes");
    assertEquals(ExitCodes.FAILED, r.status(), r.toString());
    assertSays(r.out(), "cannot check redis://127.0.0.1:1: Failed to connect");
    assertSays(r.err(), "nothing written: 2 node(s) could not be checked");
    assertSays(
        r.audit(), "result=REFUSED", "not_checked=[redis://127.0.0.1:1, redis://127.0.0.1:2]");
    assertEquals(List.of(), lives().stream().filter(l -> l != null).toList(), "nothing stamped");
  }

  /** A node with more keys than one script should scan is not checked, and not stamped. */
  @Test
  void aNodeWithTooManyKeysToCheckIsNotTouched() {
    try (Jedis jedis = on(nodes.node(0))) {
      jedis.eval("for i = 1, 100001 do redis.call('SET', 'app:' .. i, 'v') end", 0);
    }
    Result r = redlock("", "init-nodes", "--node", "1", "--yes");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    assertSays(r.out(), "NOT CHECKED: 100001 keys in the database, over 100000");
    assertNull(life(nodes.node(0)));
  }

  @Test
  void badNodeChoicesAreUsageErrors() {
    assertEquals(ExitCodes.USAGE, redlock("", "init-nodes", "--yes").status(), "--node or --all");
    Result both = redlock("", "init-nodes", "--all", "--node", "1", "--yes");
    assertEquals(ExitCodes.USAGE, both.status(), both.toString());
    Result absent = redlock("", "init-nodes", "--node", "redis://127.0.0.1:1", "--yes");
    assertEquals(ExitCodes.USAGE, absent.status(), absent.toString());
    assertSays(absent.err(), "--node redis://127.0.0.1:1 is not one of the nodes");
    Result position = redlock("", "init-nodes", "--node", "4", "--yes");
    assertEquals(ExitCodes.USAGE, position.status(), position.toString());
    assertEquals(List.of(), lives().stream().filter(l -> l != null).toList(), "nothing stamped");
  }

  // ---- run on quarantined nodes

  /**
   * {@code redlock run} on new nodes says in one line what stops it and when it will work, and
   * points to init-nodes; once they are vouched for, the same run runs.
   */
  @Test
  void runOnQuarantinedNodesSaysUntilWhenAndWhatToDo() {
    NodeData.vouchForNewNode(nodes.node(0), RedlockConfig.DEFAULT_KEY_PREFIX);
    Result r = redlock("", "run", "--wait", "300ms", "init:run", "--", "true");
    assertEquals(ExitCodes.NOT_ACQUIRED, r.status(), r.toString());
    Matcher line =
        Pattern.compile(
                "redlock: 2 of 3 nodes are in the restart guard's quarantine \\(restarted, flushed"
                    + " or new\\) until (\\d\\d:\\d\\d:\\d\\d) \\(([0-9.]+)s\\): no quorum \\(2 of"
                    + " 3\\) before then; if they are new and never served a lock, 'redlock"
                    + " init-nodes' lets them vote now\n")
            .matcher(r.err());
    assertTrue(line.find(), r.toString());
    double seconds = Double.parseDouble(line.group(2));
    assertTrue(seconds > 50 && seconds <= 60, "about a minute of maxTtl left: " + seconds);

    Result vouched = redlock("", "init-nodes", "--all", "--yes");
    assertEquals(0, vouched.status(), vouched.toString());
    assertSays(vouched.out(), "init-nodes: 2 vouched for, 1 voting already");
    Result ran = redlock("", "run", "--wait", "300ms", "init:run", "--", "sh", "-c", "exit 7");
    assertEquals(7, ran.status(), "the lock was taken and the command ran: " + ran);
  }

  /** When nodes are down as well as quarantined, the line says no quorum will form even then. */
  @Test
  void runSaysWhenEvenTheQuarantinesEndWouldNotBeEnough() {
    Result r =
        redlock(
            "",
            "run",
            "--nodes",
            nodes.uris().get(0) + ",redis://127.0.0.1:1,redis://127.0.0.1:2",
            "--wait",
            "300ms",
            "init:down",
            "--",
            "true");
    assertEquals(ExitCodes.NOT_ACQUIRED, r.status(), r.toString());
    assertSays(
        r.err(),
        "redlock: 1 of 3 nodes is in the restart guard's quarantine (restarted, flushed or new),"
            + " and 2 failed or hold the lock for another owner: no quorum (2 of 3) even once the"
            + " quarantine ends; see 'redlock status init:down' and 'redlock doctor'");
  }

  static String get(RedisNode node, String key) {
    try (Jedis jedis = on(node)) {
      return jedis.get(key);
    }
  }
}
