package dev.redlock.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.admin.LockStatus;
import dev.redlock.testkit.RedisNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code redlock run}: the lock held around a command, and its exit statuses. */
class CliRunIT extends CliITBase {
  /** {@link #redlock(String...)} on another thread. */
  static CompletableFuture<Result> inBackground(String... args) {
    return CompletableFuture.supplyAsync(() -> redlock(args));
  }

  /** A ttl that cannot be renewed stops run before the command starts. */
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
}
