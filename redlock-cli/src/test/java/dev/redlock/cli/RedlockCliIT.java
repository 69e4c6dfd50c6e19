package dev.redlock.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.ReadWriteLock;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import dev.redlock.Semaphore;
import dev.redlock.admin.LockStatus;
import dev.redlock.admin.ReadWriteStatus;
import dev.redlock.admin.RedlockAdmin;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.Persistence;
import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import redis.clients.jedis.Jedis;

/** The command line against real nodes: every command and every exit status. */
class RedlockCliIT {
  static final Duration NO_HANG = Duration.ofSeconds(30);

  /** Three nodes for the class: running, empty and vouched for before each test. */
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  static RedisNodes nodes;
  static String nodeList;

  @TempDir Path dir;

  @BeforeAll
  static void nameTheNodes() {
    nodes = redis.nodes();
    nodeList = String.join(",", nodes.uris());
  }

  /** What one invocation printed and returned. */
  record Result(int status, String out, String err) {
    @Override
    public String toString() {
      return "exit " + status + "\n--- out:\n" + out + "\n--- err:\n" + err;
    }
  }

  static Result redlock(String input, Map<String, String> env, String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        RedlockCli.execute(
            args,
            env,
            new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Result(
        status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  static Result redlock(String... args) {
    return redlock("", Map.of("REDLOCK_NODES", nodeList), args);
  }

  /** {@link #redlock(String...)} on another thread. */
  static CompletableFuture<Result> inBackground(String... args) {
    return CompletableFuture.supplyAsync(() -> redlock(args));
  }

  static Redlock client() {
    return Redlock.create(
        RedlockConfig.builder().nodes(nodes.uris()).nodeTimeout(Duration.ofMillis(200)).build());
  }

  static LockStatus.Verdict verdict(String resource) {
    try (RedlockAdmin admin =
        RedlockAdmin.create(RedlockConfig.builder().nodes(nodes.uris()).build())) {
      return admin.status(resource).verdict();
    }
  }

  // ---- usage errors

  @ParameterizedTest
  @ValueSource(strings = {"", "run", "status", "doctor", "release", "quarantine", "init-nodes"})
  void everyCommandHasHelpWithExamples(String command) {
    Result r = command.isEmpty() ? redlock("--help") : redlock(command, "--help");
    assertEquals(0, r.status(), r.toString());
    assertTrue(r.out().contains("Examples:"), r.toString());
  }

  @Test
  void noNodesAnywhereIsAUsageErrorThatSaysWhereNodesComeFrom() {
    Result r = redlock("", Map.of(), "status", "r");
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains("no nodes: give --nodes"), r.toString());
  }

  @Test
  void aBadNodeListIsAUsageErrorNamingTheNode() {
    Result r = redlock("status", "--nodes", "redis://127.0.0.1:notaport", "r");
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains("notaport"), r.toString());
  }

  @Test
  void badFlagsAreUsageErrors() {
    Result none = redlock();
    assertEquals(ExitCodes.USAGE, none.status(), "no subcommand: " + none);
    assertTrue(none.err().startsWith("Usage: redlock "), none.toString());
    assertTrue(none.err().contains("init-nodes"), "the subcommands are listed: " + none);
    Result unknown = redlock("--bogus");
    assertTrue(unknown.err().startsWith("redlock: Unknown option: '--bogus'"), unknown.toString());
    assertEquals(ExitCodes.USAGE, redlock("status", "--bogus", "r").status());
    assertEquals(ExitCodes.USAGE, redlock("run", "--ttl", "5x", "r", "--", "true").status());
    assertEquals(ExitCodes.USAGE, redlock("run", "r").status(), "a command is required");
    Result zero = redlock("run", "--ttl", "0s", "r", "--", "true");
    assertEquals(ExitCodes.USAGE, zero.status(), zero.toString());
    assertTrue(zero.err().contains("ttl"), zero.toString());
  }

  /**
   * Two of three nodes restarted without persistence answer, free, but sit out the restart guard:
   * no lock can be won, so the verdict is UNDECIDED, not FREE.
   */
  @Test
  void statusIsUndecidedWhenTooFewNodesCanVote() {
    nodes.node(1).restart(Persistence.NONE); // the fixture vouches for them before the next test
    nodes.node(2).restart(Persistence.NONE);
    Result r = redlock("status", "cli:quarantined");
    assertTrue(r.out().contains("cli:quarantined: UNDECIDED"), r.toString());
    Result rw = redlock("status", "--read-write", "cli:quarantined-rw");
    assertTrue(rw.out().contains("cli:quarantined-rw: UNDECIDED"), rw.toString());
  }

  @Test
  void nodesFromAConfigFileAndFromTheFlagOverridingIt() throws Exception {
    Path config = dir.resolve("redlock.properties");
    Files.writeString(config, "redlock.nodes=" + nodeList + "\nredlock.nodeTimeout=200ms\n");
    Result fromFile = redlock("", Map.of(), "status", "--config", config.toString(), "cfg");
    assertEquals(0, fromFile.status(), fromFile.toString());
    assertTrue(fromFile.out().contains("cfg: FREE"), fromFile.toString());

    Files.writeString(config, "redlock.nodes=" + nodeList + "\nredlock.bogus=1\n");
    Result bad = redlock("", Map.of(), "status", "--config", config.toString(), "cfg");
    assertEquals(ExitCodes.USAGE, bad.status(), bad.toString());
    assertTrue(bad.err().contains("redlock.bogus"), bad.toString());

    Result missing =
        redlock("", Map.of(), "status", "--config", dir.resolve("nope").toString(), "x");
    assertEquals(ExitCodes.USAGE, missing.status(), missing.toString());
  }

  // ---- run

  /** Issue 13, item 5: a ttl that cannot be renewed stops run before the command starts. */
  @Test
  void runWithATtlTooShortToRenewNeverStartsTheCommand() {
    Path ran = dir.resolve("ran");
    Result r = redlock("run", "--ttl", "60ms", "cli:short", "--", "touch", ran.toString());
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains("ttl too short to renew"), r.toString());
    assertFalse(Files.exists(ran), "the command ran without a lease that could be kept");
  }

  @Test
  void runHoldsTheLockPassesTheTokenAndExitsWithTheCommandsStatus() throws Exception {
    Path token = dir.resolve("token");
    Path go = dir.resolve("go");
    CompletableFuture<Result> run =
        inBackground(
            "run",
            "--ttl",
            "2s",
            "cli:run",
            "--",
            "sh",
            "-c",
            "echo \"$REDLOCK_RESOURCE $REDLOCK_FENCING_TOKEN\" > "
                + token
                + "; while [ ! -f "
                + go
                + " ]; do sleep 0.05; done; exit 3");
    await().atMost(NO_HANG).until(() -> Files.exists(token));
    assertEquals(LockStatus.Verdict.HELD, verdict("cli:run"), "held while the command runs");
    Files.writeString(go, "");
    Result r = run.get(NO_HANG.toSeconds(), TimeUnit.SECONDS);
    assertEquals(3, r.status(), r.toString());
    String[] seen = Files.readString(token).trim().split(" ");
    assertEquals("cli:run", seen[0]);
    assertTrue(Long.parseLong(seen[1]) > 0, "a fencing token: " + seen[1]);
    assertEquals(LockStatus.Verdict.FREE, verdict("cli:run"), "released when the command exits");
  }

  @Test
  void runGivesUpWithItsOwnStatusWhenTheLockIsHeldElsewhere() throws Exception {
    try (Redlock holder = client();
        Lease held = holder.acquire("cli:busy", Duration.ofSeconds(10), NO_HANG)) {
      Result r = redlock("run", "--wait", "300ms", "cli:busy", "--", "true");
      assertEquals(ExitCodes.NOT_ACQUIRED, r.status(), r.toString());
      assertTrue(r.err().contains("held elsewhere"), r.toString());
      assertTrue(held.isValid());
    }
  }

  @Test
  void aCommandThatDoesNotExistIs127() {
    Result r = redlock("run", "cli:missing", "--", dir.resolve("no-such-command").toString());
    assertEquals(ExitCodes.NOT_FOUND, r.status(), r.toString());
    assertEquals(LockStatus.Verdict.FREE, verdict("cli:missing"), "nothing left held");
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aLostLeaseStopsTheCommandAndExitsWithItsOwnStatus(boolean ignoresSigterm) throws Exception {
    Path pidFile = dir.resolve("pid");
    // The command writes its pid and then waits; one variant ignores SIGTERM (SIGKILL after grace).
    String script =
        (ignoresSigterm ? "trap '' TERM; " : "")
            + "echo $$ > "
            + pidFile
            + "; while :; do sleep 0.1; done";
    CompletableFuture<Result> run =
        inBackground(
            "run", "--ttl", "1s", "--grace", "500ms", "cli:lost", "--", "sh", "-c", script);
    await()
        .atMost(NO_HANG)
        .until(() -> Files.exists(pidFile) && !Files.readString(pidFile).isBlank());
    long pid = Long.parseLong(Files.readString(pidFile).trim());
    List<RedisNode> frozen = new ArrayList<>(List.of(nodes.node(0), nodes.node(1)));
    frozen.forEach(RedisNode::pause); // a majority: renewal fails, the lease is lost
    try {
      Result r = run.get(NO_HANG.toSeconds(), TimeUnit.SECONDS);
      assertEquals(ExitCodes.LEASE_LOST, r.status(), r.toString());
      assertTrue(r.err().contains("lost the lease on 'cli:lost'"), r.toString());
      if (ignoresSigterm) {
        assertTrue(r.err().contains("SIGKILL"), r.toString());
      }
      assertFalse(
          ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false),
          "the command (pid " + pid + ") was stopped");
    } finally {
      frozen.forEach(RedisNode::resume);
    }
  }

  // ---- status

  @Test
  void statusShowsHolderTtlFenceAndVerdictPerNodeAndAsJson() throws Exception {
    try (Redlock holder = client();
        Lease held = holder.acquire("cli:status", Duration.ofSeconds(20), NO_HANG)) {
      Result r = redlock("status", "cli:status", "cli:other");
      assertEquals(0, r.status(), r.toString());
      assertTrue(r.out().contains("cli:status: HELD by "), r.toString());
      assertTrue(r.out().contains("cli:other: FREE"), r.toString());
      assertTrue(
          r.out()
              .matches(
                  "(?s).*held  ttl [0-9.]+s  owner [0-9a-f]{8}  fence "
                      + held.fencingToken()
                      + ".*"),
          r.toString());

      Result json = redlock("status", "--json", "cli:status");
      assertEquals(0, json.status(), json.toString());
      assertTrue(
          json.out().startsWith("[{\"resource\":\"cli:status\",\"verdict\":\"HELD\""),
          json.toString());
      assertTrue(json.out().contains("\"fencingCounter\":" + held.fencingToken()), json.toString());
    }
  }

  @Test
  void statusReportsAnUnreachableNodeWithoutFailing() {
    Result r =
        redlock(
            "", Map.of(), "status", "--nodes", nodeList + ",redis://127.0.0.1:1", "cli:partial");
    assertEquals(0, r.status(), r.toString());
    assertTrue(r.out().contains("redis://127.0.0.1:1  unreachable: "), r.toString());
  }

  // ---- release --force

  @Test
  void releaseAsksForTheResourceNameAndOnlyThenBreaksTheLock() throws Exception {
    try (Redlock holder = client()) {
      Lease held = holder.acquire("cli:stuck", Duration.ofSeconds(30), NO_HANG);
      Map<String, String> env = Map.of("REDLOCK_NODES", nodeList);
      Result declined = redlock("nope\n", env, "release", "--force", "cli:stuck");
      assertEquals(ExitCodes.CHECK_FAILED, declined.status(), declined.toString());
      assertEquals(LockStatus.Verdict.HELD, verdict("cli:stuck"));

      Result confirmed =
          redlock("cli:stuck\n", env, "release", "--force", "--reason", "host died", "cli:stuck");
      assertEquals(0, confirmed.status(), confirmed.toString());
      assertTrue(confirmed.out().contains("deleted"), confirmed.toString());
      assertEquals(LockStatus.Verdict.FREE, verdict("cli:stuck"));
      assertFalse(
          held.isValid() && held.extend(Duration.ofSeconds(5)), "the old holder cannot extend");
    }
  }

  @Test
  void releaseWithYesDoesNotAsk() throws Exception {
    try (Redlock holder = client()) {
      holder.acquire("cli:yes", Duration.ofSeconds(30), NO_HANG);
      Result r = redlock("release", "--force", "--yes", "cli:yes");
      assertEquals(0, r.status(), r.toString());
      assertEquals(LockStatus.Verdict.FREE, verdict("cli:yes"));
    }
  }

  // ---- semaphores and read-write locks (issue 17, item 4)

  static RedlockAdmin admin() {
    return RedlockAdmin.create(RedlockConfig.builder().nodes(nodes.uris()).build());
  }

  @Test
  void statusOfASemaphoreCountsItsPermitsAndReleaseOfOnePermitFreesOnlyThatOne() throws Exception {
    try (Redlock holder = client()) {
      Semaphore exports = holder.semaphore("cli:sem", 3);
      Lease a = exports.acquire(Duration.ofSeconds(30), NO_HANG);
      Lease b = exports.acquire(Duration.ofSeconds(30), NO_HANG);
      Result r = redlock("status", "--permits", "3", "cli:sem");
      assertEquals(0, r.status(), r.toString());
      assertTrue(r.out().startsWith("cli:sem: 2 of 3 permits held\n"), r.toString());
      assertTrue(r.out().contains(a.resource() + ": HELD by "), r.toString());
      assertTrue(r.out().contains(b.resource() + ": HELD by "), r.toString());
      assertEquals(1, r.out().split(": FREE \\(quorum", -1).length - 1, "one free permit: " + r);

      Result json = redlock("status", "--permits", "3", "--json", "cli:sem");
      assertEquals(0, json.status(), json.toString());
      assertTrue(
          json.out().startsWith("[{\"semaphore\":\"cli:sem\",\"permits\":3,\"held\":2,"),
          json.toString());
      assertTrue(json.out().contains("\"fencingCounter\":" + a.fencingToken()), json.toString());

      String permitOfA = a.resource().substring(a.resource().lastIndexOf(':') + 1);
      Result one =
          redlock(
              "release", "--force", "--yes", "--permits", "3", "--permit", permitOfA, "cli:sem");
      assertEquals(0, one.status(), one.toString());
      assertTrue(one.out().contains("deleted"), one.toString());
      assertTrue(
          redlock("status", "--permits", "3", "cli:sem").out().startsWith("cli:sem: 1 of 3"));
      assertEquals(LockStatus.Verdict.FREE, verdict(a.resource()));
      assertEquals(LockStatus.Verdict.HELD, verdict(b.resource()), "the other permit is kept");
      assertFalse(a.isValid() && a.extend(Duration.ofSeconds(5)), "the broken permit is gone");
      assertTrue(b.extend(Duration.ofSeconds(30)), "the other holder keeps its permit");

      Map<String, String> env = Map.of("REDLOCK_NODES", nodeList);
      Result all = redlock("cli:sem\n", env, "release", "--force", "--permits", "3", "cli:sem");
      assertEquals(0, all.status(), all.toString());
      assertTrue(all.out().contains("cli:sem: 1 of 3 permits held"), all.toString());
      for (int i = 0; i < 3; i++) {
        assertEquals(LockStatus.Verdict.FREE, verdict(exports.permitResource(i)), all.toString());
      }
    }
  }

  /**
   * Asked with fewer permits than its clients use, status and release say which permits beyond are
   * held (status would otherwise undercount, and "every permit" leave those running). Planted
   * (docs/testing.md): no look past the permits asked about → no warning, fails.
   */
  @Test
  void aSemaphoreAskedWithTooFewPermitsWarnsOfThePermitsHeldBeyond() throws Exception {
    try (Redlock holder = client()) {
      Semaphore wide = holder.semaphore("cli:sem-wide", 4);
      List<Lease> leases = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        leases.add(wide.acquire(Duration.ofSeconds(30), NO_HANG));
      }
      Result r = redlock("status", "--permits", "2", "cli:sem-wide");
      assertEquals(0, r.status(), r.toString());
      assertTrue(r.out().startsWith("cli:sem-wide: 2 of 2 permits held\n"), r.toString());
      assertTrue(
          r.out()
              .contains(
                  "WARNING: permit(s) 2, 3 held on a node too: clients may use more than --permits 2"),
          r.toString());
      Result json = redlock("status", "--permits", "2", "--json", "cli:sem-wide");
      assertTrue(json.out().contains("\"heldBeyond\":[2, 3]"), json.toString());
      Result none = redlock("status", "--permits", "4", "cli:sem-wide");
      assertFalse(none.out().contains("WARNING"), none.toString());

      Result broken = redlock("release", "--force", "--yes", "--permits", "2", "cli:sem-wide");
      assertEquals(0, broken.status(), broken.toString());
      assertTrue(broken.err().contains("permit(s) 2, 3 held on a node too"), broken.toString());
      assertTrue(broken.err().contains("(those are not broken)"), broken.toString());
      assertEquals(LockStatus.Verdict.HELD, verdict(wide.permitResource(2)));
      assertEquals(LockStatus.Verdict.HELD, verdict(wide.permitResource(3)));
      leases.forEach(Lease::release);
    }
  }

  @Test
  void statusOfAReadWriteLockShowsItsReadersAWaitingWriterAndThenTheWriter() throws Exception {
    try (Redlock holder = client()) {
      ReadWriteLock rw = holder.readWriteLock("cli:rw");
      Lease r1 = rw.readLock().acquire(Duration.ofSeconds(30), NO_HANG);
      Lease r2 = rw.readLock().acquire(Duration.ofSeconds(30), NO_HANG);
      // A reader that expires unreleased leaves its entry among the live ones: not counted.
      Lease expired = rw.readLock().acquire(Duration.ofMillis(300), NO_HANG);
      await()
          .atMost(NO_HANG)
          .until(() -> redlock("status", "--read-write", "cli:rw").out().contains("by 2 reader"));
      assertTrue(
          nodes.all().stream().anyMatch(n -> readerEntries(n, "cli:rw") == 3),
          "the expired entry is still there, and was not counted");
      Result read = redlock("status", "--read-write", "cli:rw");
      assertEquals(0, read.status(), read.toString());
      assertTrue(read.out().startsWith("cli:rw: READ_HELD by 2 reader(s) "), read.toString());
      assertTrue(
          read.out().split("writer free  readers 2 \\(longest ttl ", -1).length - 1 >= 2,
          "both readers on a quorum: " + read);
      assertTrue(read.out().contains("fence " + expired.fencingToken()), "the last token drawn");
      Result json = redlock("status", "--read-write", "--json", "cli:rw");
      assertTrue(
          json.out().startsWith("[{\"readWriteLock\":\"cli:rw\",\"verdict\":\"READ_HELD\""),
          json.toString());
      assertTrue(json.out().contains("\"readerCount\":2,"), json.toString());

      CompletableFuture<Lease> writer =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return rw.writeLock().acquire(Duration.ofSeconds(30), NO_HANG);
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              });
      await()
          .atMost(NO_HANG)
          .until(
              () -> {
                String out = redlock("status", "--read-write", "cli:rw").out();
                return out.contains(", a writer waits") && out.contains("  intent mark ");
              });
      r1.close();
      r2.close();
      try (Lease w = writer.get(NO_HANG.toSeconds(), TimeUnit.SECONDS)) {
        Result written = redlock("status", "--read-write", "cli:rw");
        assertTrue(written.out().startsWith("cli:rw: WRITE_HELD by "), written.toString());
        assertTrue(written.out().contains("writer held  ttl "), written.toString());
        assertTrue(
            written.out().contains("  readers 0  fence " + w.fencingToken()), written.toString());
      }
      assertEquals(
          ReadWriteStatus.Verdict.FREE, admin().readWriteStatus("cli:rw").verdict(), "released");
    }
  }

  /**
   * A broken read-write lock's next lease has a larger token than every lease broken, even when the
   * node that gave them their tokens cannot vote for the next one: node 0's counter, planted, leads
   * the others', so the broken leases' tokens come from it, and the lagging counters of nodes 1 and
   * 2 are within a ttl of them (not raised at the grant, as docs/fencing.md allows). Only the
   * break's raise keeps the next writer, granted by nodes 1 and 2 alone, above them. {@code clock}:
   * node 0 leads by 20 s and is frozen before the break, so its counter is never read and only the
   * clock term (now + maxTtl on nodes 1 and 2) keeps the next token above. {@code counter}: node 0
   * leads by 90 s, past maxTtl (60 s), which the clock term cannot cover, and is frozen after the
   * break; the grant itself raised the counters that lagged by a ttl or more (QuorumStore.fence),
   * and the break's largest-counter term would cover it too. Planted (docs/testing.md):
   * force_release_read_write.lua without its raise, or force_fence.lua without its clock term,
   * fails the clock cases; without its largest-counter term every case passes, as the grant's raise
   * says it must.
   */
  @ParameterizedTest
  @CsvSource({"writer,counter", "readers,counter", "writer,clock", "readers,clock"})
  void releaseForceOfAReadWriteLockGivesTheNextWriterALargerToken(String broken, String term)
      throws Exception {
    String name = "cli:rw-break-" + broken + "-" + term;
    RedisNode ahead = nodes.node(0);
    boolean counterTerm = term.equals("counter");
    long leadMicros = counterTerm ? 90_000_000 : 20_000_000;
    try (Jedis jedis = on(ahead)) {
      jedis.psetex(
          "redlock:@rw:w:" + name + "@fence",
          120_000,
          Long.toString(nodeMicros(ahead) + leadMicros));
    }
    try (Redlock holder = client()) {
      ReadWriteLock rw = holder.readWriteLock(name);
      List<Lease> leases = new ArrayList<>();
      long brokenToken;
      // Node 0 gives the token only if its vote counted: a grant decided by nodes 1 and 2 before
      // node 0 answered takes theirs (seen once on a loaded CI machine). Taken again until it did.
      for (int grants = 1; ; grants++) {
        if (broken.equals("writer")) {
          leases.add(rw.writeLock().acquire(Duration.ofSeconds(30), NO_HANG));
        } else {
          leases.add(rw.readLock().acquire(Duration.ofSeconds(30), NO_HANG));
          leases.add(rw.readLock().acquire(Duration.ofSeconds(30), NO_HANG));
        }
        brokenToken = leases.stream().mapToLong(Lease::fencingToken).max().orElseThrow();
        if (brokenToken > nodeMicros(nodes.node(1)) + leadMicros / 2 || grants == 20) {
          break;
        }
        leases.forEach(Lease::release);
        leases.clear();
      }
      assertTrue(brokenToken > nodeMicros(nodes.node(1)) + leadMicros / 2, "token from node 0");
      if (!counterTerm) {
        ahead.pause(); // its counter is never read: ARGV[1] comes from nodes 1 and 2 alone
      }
      try {
        Result r = redlock("release", "--force", "--yes", "--read-write", name);
        assertTrue(
            r.out()
                .contains(
                    broken.equals("writer")
                        ? "writer deleted, 0 live reader(s) removed"
                        : "writer absent, 2 live reader(s) removed"),
            r.toString());
        if (counterTerm) {
          assertEquals(0, r.status(), r.toString());
          assertEquals(ReadWriteStatus.Verdict.FREE, admin().readWriteStatus(name).verdict());
          ahead.pause();
        }
        for (Lease lease : leases) {
          assertFalse(lease.isValid() && lease.extend(Duration.ofSeconds(5)), "broken: " + lease);
        }
        try (Lease next = rw.writeLock().acquire(Duration.ofSeconds(5), NO_HANG)) {
          assertTrue(
              next.fencingToken() > brokenToken, next.fencingToken() + " after " + brokenToken);
        }
      } finally {
        ahead.resume();
      }
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "status --permits 0 x|--permits must be between 1 and 64",
        "status --permits 65 x|--permits must be between 1 and 64",
        "status --permits 3 --read-write x|--permits and --read-write exclude each other",
        "release --force --permits 3 --read-write x|--permits and --read-write exclude each other",
        "release --force --permit 1 x|--permit I needs --permits K",
        "release --force --read-write --permit 1 x|--permit I needs --permits K",
        "release --force --permits 3 --permit 3 x|--permit must be between 0 and 2",
        "release --force --permits 0 x|--permits must be between 1 and 64",
        "status --permits 2 x@permit:1|name must not contain '@permit:'",
        "status --read-write @x|name: resource must not start with '@'",
        "release --force --yes --read-write |name must not be blank"
      })
  void badSemaphoreAndReadWriteFlagsAreUsageErrorsNamingTheFlag(String line) {
    String[] parts = line.split("\\|");
    Result r = redlock(parts[0].split(" ", -1));
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains(parts[1]), r.toString());
  }

  /** The admin refuses what the library refuses, in the library's words. */
  @Test
  void theAdminRefusesTheNamesTheLibraryRefusesWithItsMessage() {
    try (Redlock lib = client();
        RedlockAdmin admin = admin()) {
      for (String bad : List.of(" ", "@x", "a@rw:b", "a@life")) {
        assertEquals(
            refusal(() -> lib.readWriteLock(bad)), refusal(() -> admin.readWriteStatus(bad)));
      }
      for (String bad : List.of(" ", "a@permit:1", "@x")) {
        assertEquals(
            refusal(() -> lib.semaphore(bad, 2)), refusal(() -> admin.semaphoreStatus(bad, 2)));
      }
      for (int permits : new int[] {0, 65}) {
        assertEquals(
            refusal(() -> lib.semaphore("s", permits)),
            refusal(() -> admin.semaphoreStatus("s", permits)));
      }
    }
  }

  /** How many entries, live or expired, node {@code node} holds for the readers of {@code name}. */
  static long readerEntries(RedisNode node, String name) {
    try (Jedis jedis = on(node)) {
      return jedis.zcard("redlock:@rw:r:" + name);
    }
  }

  static String refusal(Runnable call) {
    try {
      call.run();
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    throw new AssertionError("accepted");
  }

  // ---- doctor

  /** The doctor's line for one check on one node (and its fix line), or "" if there is none. */
  static String check(Result r, String node, String what) {
    String[] lines = r.out().split("\n");
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].contains("  " + node + "  " + what + ": ")) {
        boolean fix = i + 1 < lines.length && lines[i + 1].startsWith("        fix: ");
        return lines[i] + (fix ? "\n" + lines[i + 1] : "");
      }
    }
    return "";
  }

  /**
   * A configuration file for the shared nodes with a key prefix of the test's own (written again at
   * each call: the same file).
   */
  String configWithPrefix(String prefix) throws Exception {
    Path config = dir.resolve("redlock-" + prefix.replace(":", "") + ".properties");
    Files.writeString(
        config,
        "redlock.nodes=" + nodeList + "\nredlock.keyPrefix=" + prefix + "\nredlock.maxTtl=60s\n");
    return config.toString();
  }

  /** Asserts that {@code line} says each of {@code phrases}. */
  static void assertSays(String line, String... phrases) {
    for (String phrase : phrases) {
      assertTrue(line.contains(phrase), "'" + phrase + "' missing from: " + line);
    }
  }

  /**
   * Asserts that the doctor's {@code line} (in {@code r}) is a {@code level} that says each of
   * {@code phrases}.
   */
  static void assertLine(String line, String level, Result r, String... phrases) {
    assertTrue(line.startsWith(level), line + "\n" + r);
    assertSays(line, phrases);
  }

  /** A connection of the test's own to {@code node}. */
  static Jedis on(RedisNode node) {
    return new Jedis("127.0.0.1", node.port());
  }

  /**
   * {@code redlock doctor} on every node as {@code user} (password {@code secret}), made on every
   * node with every command but {@code denied} (an ACL rule such as {@code -info}).
   */
  static Result doctorAs(String user, String denied) {
    for (RedisNode node : nodes.all()) {
      try (Jedis jedis = on(node)) {
        jedis.aclSetUser(user, "on", ">secret", "~*", "+@all", denied);
      }
    }
    String asUser = nodeList.replace("redis://", "redis://" + user + ":secret@");
    return redlock("", Map.of(), "doctor", "--nodes", asUser);
  }

  /** {@code redlock doctor} with the configuration of {@link #configWithPrefix}. */
  Result doctorWithPrefix(String prefix) throws Exception {
    return redlock("", Map.of(), "doctor", "--config", configWithPrefix(prefix));
  }

  /**
   * {@code redlock quarantine ARGS} with the configuration of {@link #configWithPrefix}, answering
   * its question with {@code input}.
   */
  Result quarantineWithPrefix(String prefix, String input, String... args) throws Exception {
    List<String> all = new ArrayList<>(List.of("quarantine", "--config", configWithPrefix(prefix)));
    all.addAll(List.of(args));
    return redlock(input, Map.of(), all.toArray(String[]::new));
  }

  static String runId(RedisNode node) {
    try (Jedis jedis = on(node)) {
      return NodeLife.info(jedis, "server").get("run_id");
    }
  }

  static long nodeMicros(RedisNode node) {
    try (Jedis jedis = on(node)) {
      return NodeLife.nodeMicros(jedis);
    }
  }

  /** Each persistence setting: its verdict, what it means for the restart guard, and the fix. */
  @ParameterizedTest
  @ValueSource(strings = {"aof-always", "aof-everysec", "rdb-only", "none"})
  void doctorSaysWhatEachPersistenceSettingMeansForTheRestartGuard(String setting) {
    RedisNode node = nodes.node(0);
    try (Jedis jedis = on(node)) {
      switch (setting) {
        case "aof-always" -> {
          jedis.configSet("appendonly", "yes");
          jedis.configSet("appendfsync", "always");
        }
        case "aof-everysec" -> {
          jedis.configSet("appendonly", "yes");
          jedis.configSet("appendfsync", "everysec");
        }
        case "rdb-only" -> jedis.configSet("save", "3600 1");
        default -> {}
      }
      Result r = redlock("doctor");
      String line = check(r, node.uri(), "persistence");
      assertEquals(0, r.status(), "persistence alone never fails with the guard on: " + r);
      switch (setting) {
        case "aof-always" -> {
          assertTrue(
              line.startsWith("ok    ")
                  && line.contains("appendonly yes, appendfsync always")
                  && line.contains(
                      "without restartGuard=trust_fsynced_aof_restarts (not the default) each restart")
                  && !line.contains("fix:"),
              line + "\n" + r);
        }
        case "aof-everysec" -> {
          assertLine(
              line,
              "warn  ",
              r,
              "appendfsync everysec: a restart may lose",
              "up to ~1 s",
              "sees each restart by run_id",
              "out of votes for maxTtl (60.0s) after it",
              "fix: appendfsync always");
        }
        case "rdb-only" -> {
          assertLine(
              line,
              "warn  ",
              r,
              "RDB snapshots only (save '3600 1', appendonly no)",
              "reloads an older snapshot",
              "sees each restart by run_id",
              "fix: appendonly yes and appendfsync always");
        }
        default -> {
          assertLine(
              line,
              "warn  ",
              r,
              "no persistence (appendonly no, save '')",
              "comes back empty",
              "out of votes for maxTtl (60.0s)",
              "fix: appendonly yes and appendfsync always");
        }
      }
      assertFalse(line.contains("covered"), line);
    } finally {
      try (Jedis jedis = on(node)) {
        jedis.configSet("appendonly", "no");
        jedis.configSet("appendfsync", "everysec");
        jedis.configSet("save", "");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"allkeys-lru", "volatile-lru", "volatile-ttl"})
  void doctorFailsEveryPolicyThatCanEvictLockOrFenceKeys(String policy) {
    try (Jedis jedis = on(nodes.node(1))) {
      jedis.configSet("maxmemory-policy", policy);
      Result r = redlock("doctor");
      assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
      String line = check(r, nodes.node(1).uri(), "eviction");
      assertTrue(line.startsWith("FAIL  "), line + "\n" + r);
      assertTrue(line.contains("maxmemory-policy " + policy), line);
      assertTrue(line.contains("a lock granted twice"), line);
      assertTrue(
          line.contains(
              policy.startsWith("volatile-")
                  ? "lock keys and fence keys all carry one"
                  : "lock keys, fence keys"),
          line);
      assertTrue(line.contains("fix: CONFIG SET maxmemory-policy noeviction"), line);
      assertTrue(
          check(r, nodes.node(0).uri(), "eviction").startsWith("ok    "),
          "the other nodes pass: " + r);
    } finally {
      try (Jedis jedis = on(nodes.node(1))) {
        jedis.configSet("maxmemory-policy", "noeviction");
      }
    }
  }

  @Test
  void doctorPassesAWellSetUpClusterAndFlagsOneServerListedTwice() {
    try (FaultyNodes aof =
        redis.startBehindProxies(RedisFixture.nodes(3).persistence(Persistence.AOF))) {
      String list = String.join(",", aof.uris());
      Result r = redlock("", Map.of(), "doctor", "--nodes", list);
      assertEquals(0, r.status(), r.toString());
      assertTrue(r.out().contains("doctor: no check failed"), r.toString());
      assertTrue(r.out().contains("3 distinct servers"), r.toString());
      assertTrue(
          check(r, aof.uris().get(0), "persistence")
              .startsWith("ok    " + aof.uris().get(0) + "  persistence: appendonly yes,"),
          r.toString());

      // Node 0 again, directly rather than through its proxy: another address, the same server.
      Result twice = redlock("", Map.of(), "doctor", "--nodes", list + "," + aof.node(0).uri());
      assertEquals(ExitCodes.CHECK_FAILED, twice.status(), twice.toString());
      assertTrue(
          twice.out().contains("is the same server as " + aof.uris().get(0)), twice.toString());
      assertTrue(twice.out().contains("warn  all nodes  node count: 4 nodes"), twice.toString());
    }
  }

  @Test
  void doctorWarnsThatANodeRefusingConfigGetCountsAsNotDurable() {
    Result r = doctorAs("limited", "-config");
    String persistence = check(r, nodes.node(0).uri(), "persistence");
    assertLine(
        persistence,
        "warn  ",
        r,
        "CONFIG GET refused",
        "durability unknown",
        "treats the node as not durable",
        "fix: grant the user +config|get");
    assertTrue(
        check(r, nodes.node(0).uri(), "eviction").startsWith("?     "), "eviction unknown: " + r);
    assertFalse(r.out().contains("secret"), "no password printed: " + r);
    assertEquals(0, r.status(), "a warning and an unknown are not failures: " + r);
  }

  @Test
  void doctorWarnsThatAUserWithoutSortedSetCommandsCannotTakeReadWriteLocks() {
    Result r = doctorAs("nozset", "-zadd");
    String line = check(r, nodes.node(1).uri(), "permissions (read-write locks)");
    assertLine(
        line,
        "warn  ",
        r,
        "every read-write lock acquisition would fail",
        "fix: if you use read-write locks, grant the user +zadd");
    assertTrue(
        check(r, nodes.node(1).uri(), "permissions").startsWith("ok    "),
        "plain locks are still allowed: " + r);
    assertEquals(0, r.status(), "a warning is not a failure: " + r);
  }

  @Test
  void doctorFailsANodeThatRefusesInfoBecauseItsVoteWouldNeverCount() {
    Result r = doctorAs("noinfo", "-info");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    String line = check(r, nodes.node(2).uri(), "restarts");
    assertLine(
        line,
        "FAIL  ",
        r,
        "INFO refused",
        "cannot tell whether the node restarted",
        "never counts its vote",
        "fix: grant the user +info");
    assertTrue(
        check(r, nodes.node(2).uri(), "persistence").startsWith("warn  "),
        "the other checks still run: " + r);
    assertTrue(
        check(r, nodes.node(2).uri(), "version")
            .startsWith("?     " + nodes.node(2).uri() + "  version: unknown (NOPERM"),
        r.toString());
    assertTrue(
        check(r, nodes.node(2).uri(), "owner-checked commands").startsWith("info  "),
        "the capability probe does not need INFO: " + r);
  }

  /**
   * What doctor reports of a server's capabilities, read-only, on both binaries (Redis 7 and the
   * 6.2 of embedded-redis): the server and version, that Lua runs, and that neither has an
   * owner-checked command (SET ... IFEQ came with Redis 8.4 and Valkey 8.1, DELEX with Redis 8.4,
   * DELIFEQ with Valkey 9.0). A user who may not run COMMAND gets "unknown (NOPERM ...)", one who
   * may not run EVAL "no (NOPERM ...)": lines of the report, not a failed or aborted run.
   */
  @ParameterizedTest
  @ValueSource(strings = {"redis-7", "redis-6.2"})
  void doctorReportsTheServerScriptingAndOwnerCheckedCommandsOfEachNode(String name) {
    Supplier<RedisBinary> binary =
        name.equals("redis-6.2") ? RedisBinary::embedded : RedisBinary::locate;
    RedisNode node = redis.start(RedisFixture.nodes(1).binary(binary)).node(0);
    String version = node.binary().version();
    assertTrue(!name.equals("redis-6.2") || version.startsWith("6.2."), version);
    String uri = node.uri();

    Result r = redlock("", Map.of(), "doctor", "--nodes", uri);
    assertEquals(0, r.status(), "a report never fails the run: " + r);
    assertEquals("ok    " + uri + "  version: Redis " + version, check(r, uri, "version"));
    assertEquals("info  " + uri + "  scripting: Lua available (EVAL)", check(r, uri, "scripting"));
    assertEquals(
        "info  "
            + uri
            + "  owner-checked commands: SET IFEQ no"
            + (version.startsWith("6.") ? " (no COMMAND DOCS: older than Redis 7.0)" : "")
            + ", DELEX no, DELIFEQ no (report only: the lock uses its scripts)",
        check(r, uri, "owner-checked commands"));
    try (Jedis jedis = on(node)) {
      // The probe reads SET's documented arguments: one SET has is found where COMMAND DOCS is.
      if (!version.startsWith("6.")) {
        assertEquals("yes", ServerChecks.setArgument(jedis, "NX"));
      }
      jedis.aclSetUser("nocommand", "on", ">secret", "~*", "+@all", "-command");
      jedis.aclSetUser("noeval", "on", ">secret", "~*", "+@all", "-eval");
    }

    Result noCommand =
        redlock(
            "",
            Map.of(),
            "doctor",
            "--nodes",
            uri.replace("redis://", "redis://nocommand:secret@"));
    assertEquals(0, noCommand.status(), "an unknown is not a failure: " + noCommand);
    assertLine(
        check(noCommand, uri, "owner-checked commands"), "?     ", noCommand, "unknown (NOPERM");
    assertEquals(
        "info  " + uri + "  scripting: Lua available (EVAL)", check(noCommand, uri, "scripting"));

    Result noEval =
        redlock(
            "", Map.of(), "doctor", "--nodes", uri.replace("redis://", "redis://noeval:secret@"));
    assertLine(check(noEval, uri, "scripting"), "info  ", noEval, "scripting: no (NOPERM");
    assertTrue(
        check(noEval, uri, "owner-checked commands").contains("DELEX no"),
        "the other probes still run: " + noEval);
    assertTrue(
        check(noEval, uri, "permissions").startsWith("FAIL  "),
        "the lock cannot run without EVAL, as before: " + noEval);
    assertFalse(noEval.out().contains("secret"), "no password printed: " + noEval);
  }

  /**
   * A server that has DELEX and DELIFEQ is reported so. No server here has them: this one is a
   * Redis 7 started with two of its commands renamed to those names, which is what COMMAND INFO
   * sees.
   */
  @Test
  void doctorReportsOwnerCheckedCommandsAServerHas() throws Exception {
    RedisBinary server = RedisBinary.locate();
    Path wrapper = dir.resolve("redis-server");
    Files.writeString(
        wrapper,
        "#!/bin/sh\nexec '"
            + server.path()
            + "' \"$@\" --rename-command GETDEL DELEX --rename-command GETEX DELIFEQ\n");
    assertTrue(wrapper.toFile().setExecutable(true));
    RedisBinary renamed = new RedisBinary(wrapper, server.version());
    String uri = redis.start(RedisFixture.nodes(1).binary(() -> renamed)).node(0).uri();

    Result r = redlock("", Map.of(), "doctor", "--nodes", uri);
    assertEquals(
        "info  "
            + uri
            + "  owner-checked commands: SET IFEQ no"
            + (server.version().startsWith("6.") ? " (no COMMAND DOCS: older than Redis 7.0)" : "")
            + ", DELEX yes, DELIFEQ yes (report only: the lock uses its scripts)",
        check(r, uri, "owner-checked commands"),
        r.toString());
  }

  @Test
  void doctorShowsEachNodesLifeAndWhatTheRestartGuardMakesOfItsMarker() throws Exception {
    String prefix = "life:";
    RedisNode node = nodes.node(0);
    String uri = node.uri();
    String runId = runId(node);
    String identity = runId + ":0:" + prefix;
    try (Jedis jedis = on(node)) {
      Result none = doctorWithPrefix(prefix);
      assertEquals(0, none.status(), none.toString());
      assertTrue(
          check(none, uri, "life")
              .startsWith("info  " + uri + "  life: run_id " + runId.substring(0, 8) + ", up "),
          none.toString());
      assertTrue(
          check(none, uri, "restart guard")
              .startsWith("info  " + uri + "  restart guard: no life marker yet"),
          none.toString());
      assertTrue(
          check(none, uri, "restart guard").contains("'redlock init-nodes' lets it vote at once"),
          none.toString());

      // As the guard stamps them: the marker, and a witness in Redis's raw encoding (SETRANGE).
      jedis.setrange(prefix + "@witness", 0, "w");
      String otherLife = "0123456789abcdef0123456789abcdef01234567";
      jedis.set(
          prefix + "@life",
          otherLife + ":0:" + prefix + ":1:" + (nodeMicros(node) - 3_600_000_000L));
      Result restarted = doctorWithPrefix(prefix);
      String line = check(restarted, uri, "restart guard");
      assertTrue(line.startsWith("warn  "), line + "\n" + restarted);
      assertTrue(
          line.contains("the life marker was stamped by another process, database or key prefix"),
          line);
      assertTrue(
          line.contains("the next acquire keeps it out of votes for 60.0s"),
          "not durable now (appendonly no), so the old epoch is not adopted: " + line);

      jedis.set(prefix + "@life", identity + ":0:" + (nodeMicros(node) - 120_000_000L));
      Result old = doctorWithPrefix(prefix);
      line = check(old, uri, "restart guard");
      assertTrue(line.startsWith("ok    "), line + "\n" + old);
      assertTrue(line.contains("never replaced since: votes"), line);

      jedis.set(prefix + "@life", identity + ":0:" + (nodeMicros(node) - 20_000_000L));
      Result young = doctorWithPrefix(prefix);
      line = check(young, uri, "restart guard");
      assertTrue(line.startsWith("warn  "), line + "\n" + young);
      java.util.regex.Matcher left =
          java.util.regex.Pattern.compile("out of votes for ([0-9.]+)s more").matcher(line);
      assertTrue(left.find(), line);
      double seconds = Double.parseDouble(left.group(1));
      assertTrue(seconds > 30 && seconds <= 40, "about 40 s of 60 left: " + line);
      assertEquals(0, young.status(), "a quarantine is a warning: " + young);

      jedis.set(prefix + "@witness", "w"); // a copy of the data: SET, RESTORE or a load
      Result replaced = doctorWithPrefix(prefix);
      line = check(replaced, uri, "restart guard");
      assertTrue(line.startsWith("warn  "), line + "\n" + replaced);
      assertTrue(line.contains("the life marker came back with a copy of the data"), line);
    }
  }

  /**
   * A node with a replica, and clients that trust fsynced AOF restarts: a replica restarted as a
   * master in the node's place would look to the guard like the node restarted from its own AOF,
   * and keep its vote with the replica's data. The doctor fails it (without the opt-in: a warning).
   */
  @Test
  void doctorFailsTheAofRestartOptInOnANodeWithReplicas() throws Exception {
    RedisNode master = nodes.node(0);
    RedisNode replica = nodes.node(2);
    try (Jedis jedis = on(replica)) {
      jedis.replicaof("127.0.0.1", master.port());
    }
    try {
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> {
                try (Jedis jedis = on(master)) {
                  return jedis.info("replication").contains("connected_slaves:1");
                }
              });
      Path config = dir.resolve("redlock-optin.properties");
      Files.writeString(
          config,
          "redlock.nodes=" + nodeList + "\nredlock.restartGuard=trust_fsynced_aof_restarts\n");
      Result optIn = redlock("", Map.of(), "doctor", "--config", config.toString());
      String line = check(optIn, master.uri(), "independence");
      assertTrue(line.startsWith("FAIL  "), line + "\n" + optIn);
      assertSays(line, "a replica restarted as a master in its place keeps its vote");
      Result plain = doctorWithPrefix("replicas:");
      assertTrue(check(plain, master.uri(), "independence").startsWith("warn  "), plain.toString());
    } finally {
      try (Jedis jedis = on(replica)) {
        jedis.replicaofNoOne();
      }
    }
  }

  @Test
  void doctorReportsThePreviousVersionsKeysAsInformation() throws Exception {
    String prefix = "legacy:";
    RedisNode node = nodes.node(2);
    try (Jedis jedis = on(node)) {
      jedis.set(prefix + "@epoch", "0");
      jedis.hset(prefix + "@fences", prefix + "r", "17");
      Result r = doctorWithPrefix(prefix);
      assertEquals(0, r.status(), r.toString());
      String line = check(r, node.uri(), "legacy keys");
      assertTrue(
          line.startsWith(
              "info  "
                  + node.uri()
                  + "  legacy keys: legacy:@epoch, legacy:@fences from the previous version: no"
                  + " longer used once every client runs this version; safe to delete then"),
          line + "\n" + r);
      assertTrue(line.contains("fix: once every client is upgraded: DEL legacy:@epoch"), line);
      assertEquals("", check(r, nodes.node(1).uri(), "legacy keys"), "only where they are: " + r);
    }
  }

  @Test
  void doctorFailsAnUnreachableNode() {
    Result r = redlock("", Map.of(), "doctor", "--nodes", nodeList + ",redis://127.0.0.1:1");
    assertEquals(ExitCodes.CHECK_FAILED, r.status(), r.toString());
    assertTrue(r.out().contains("FAIL  redis://127.0.0.1:1  reachable: "), r.toString());
  }

  // ---- quarantine

  static String life(RedisNode node, String prefix) {
    try (Jedis jedis = on(node)) {
      return jedis.get(prefix + "@life");
    }
  }

  /** Vouches for {@code node} under {@code prefix}: its marker and witness, trusted now. */
  static void vouch(RedisNode node, String prefix) {
    dev.redlock.testkit.NodeData.vouchForNewNode(node, prefix);
  }

  @Test
  void quarantineDeletesTheGuardsKeysAndTheNextAcquireKeepsTheNodeOut() throws Exception {
    String prefix = "quarantine:";
    RedisNode node = nodes.node(1);
    vouch(node, prefix);
    String marker = life(node, prefix);
    // slf4j-simple writes the audit line to System.err itself, not to the CLI's err stream.
    ByteArrayOutputStream auditLog = new ByteArrayOutputStream();
    PrintStream systemErr = System.err;
    Result r;
    System.setErr(new PrintStream(auditLog, true, StandardCharsets.UTF_8));
    try {
      r =
          quarantineWithPrefix(
              prefix, "", "--yes", "--reason", "swapped in a copy", "--node", node.uri());
    } finally {
      System.setErr(systemErr);
    }
    String audit = auditLog.toString(StandardCharsets.UTF_8);
    assertEquals(0, r.status(), r.toString());
    assertTrue(r.out().contains("never replaced since: votes"), "what it was: " + r);
    assertNull(life(node, prefix), "the marker is gone");
    try (Jedis jedis = on(node)) {
      assertFalse(jedis.exists(prefix + "@witness"), "the witness is gone");
    }
    assertTrue(
        r.out()
            .contains(
                "deleted quarantine:@life and quarantine:@witness on "
                    + node.uri()
                    + ": out of votes for maxTtl from the next acquire"),
        r.toString());
    assertSays(
        audit,
        "WARN dev.redlock.audit - quarantine node=" + node.uri(),
        "reason=\"swapped in a copy\"",
        "previous=" + marker);

    try (Redlock client =
        Redlock.create(RedlockConfig.builder().nodes(nodes.uris()).keyPrefix(prefix).build())) {
      client.tryAcquire("r", Duration.ofSeconds(10)).ifPresent(Lease::release);
    } catch (dev.redlock.LockUnavailableException quarantined) {
      // expected: the other nodes have no marker for this prefix either
    }
    Result doctor = doctorWithPrefix(prefix);
    String line = check(doctor, node.uri(), "restart guard");
    assertTrue(line.startsWith("warn  ") && line.contains("quarantined"), line + "\n" + doctor);

    vouch(nodes.node(2), prefix);
    Result byPosition = quarantineWithPrefix(prefix, "", "--yes", "--node", "3");
    assertEquals(0, byPosition.status(), byPosition.toString());
    assertNull(life(nodes.node(2), prefix), "position 3 is the third node: " + byPosition);
  }

  @Test
  void quarantineAsksForTheNodesAddressAndChangesNothingWithoutIt() throws Exception {
    String prefix = "ask:";
    RedisNode node = nodes.node(0);
    vouch(node, prefix);
    Result declined = quarantineWithPrefix(prefix, "nope\n", "--node", node.uri());
    assertEquals(ExitCodes.CHECK_FAILED, declined.status(), declined.toString());
    assertTrue(declined.out().contains("Type the node's host:port"), declined.toString());
    assertTrue(declined.err().contains("not confirmed; nothing was changed"), declined.toString());
    assertNotNull(life(node, prefix), "nothing deleted: " + declined);

    Result noAnswer = quarantineWithPrefix(prefix, "", "--node", node.uri());
    assertEquals(ExitCodes.CHECK_FAILED, noAnswer.status(), noAnswer.toString());
    assertNotNull(life(node, prefix), "nothing deleted: " + noAnswer);

    Result confirmed =
        quarantineWithPrefix(prefix, "127.0.0.1:" + node.port() + "\n", "--node", node.uri());
    assertEquals(0, confirmed.status(), confirmed.toString());
    assertNull(life(node, prefix), confirmed.toString());
  }

  @ParameterizedTest
  @ValueSource(strings = {"redis://127.0.0.1:1", "0", "4", "redis://127.0.0.1:notaport", ""})
  void quarantineOfANodeNotInTheListIsAUsageError(String bad) throws Exception {
    String prefix = "bad:";
    Result r = quarantineWithPrefix(prefix, "", "--yes", "--node", bad);
    assertEquals(ExitCodes.USAGE, r.status(), r.toString());
    assertTrue(r.err().contains("--node"), r.toString());
    for (RedisNode node : nodes.all()) {
      assertNull(life(node, prefix), "nothing written: " + r);
    }
    Result missing = redlock("quarantine", "--yes");
    assertEquals(ExitCodes.USAGE, missing.status(), missing.toString());
    assertTrue(missing.err().contains("--node"), missing.toString());
  }
}
