package dev.redlock.spring;

import dev.redlock.admin.RedlockAdmin;
import dev.redlock.config.RedlockConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import redis.clients.jedis.Jedis;

/**
 * What the health indicators report, whatever Spring Boot's health API: each node's reachability
 * and round trip (a {@code PING} on a fresh connection, as {@code redlock doctor} does) and the
 * restart guard's quarantine of it ({@link RedlockAdmin#restartGuard}). UP while at least a quorum
 * of nodes can vote: they answer and are not quarantined, so a lock can be won now.
 *
 * <p>The nodes are asked at once, each on a thread of the check's own, and the check answers within
 * {@code connectTimeout} whatever the nodes do: a node that has not answered by then (frozen, or a
 * network that drops packets) is reported as not answering, and its thread ends with its own socket
 * timeout. A new node shows the full {@code maxTtl} until a first acquisition starts its
 * quarantine, unless vouched for.
 */
public final class NodesHealth {
  private final RedlockConfig config;

  /**
   * A check of {@code config}'s nodes.
   *
   * @throws NullPointerException if {@code config} is null
   */
  public NodesHealth(RedlockConfig config) {
    this.config = Objects.requireNonNull(config, "config must not be null");
  }

  /**
   * One check.
   *
   * @param up whether at least a quorum of nodes can vote
   * @param details what to show: quorum, reachable, voting, and per node its reachability, round
   *     trip, quarantine or error
   */
  public record Check(boolean up, Map<String, Object> details) {}

  /** Checks every node now, all at once; answers within {@code connectTimeout}. */
  public Check check() {
    RedlockAdmin admin = RedlockAdmin.create(config);
    List<String> names = admin.nodes();
    if (names.isEmpty()) { // a store, not Redis nodes: nothing of ours to ask
      return new Check(true, Map.of("nodes", Map.of()));
    }
    ExecutorService askers =
        Executors.newFixedThreadPool(
            names.size(),
            task -> {
              Thread thread = new Thread(task, "redlock-health");
              thread.setDaemon(true);
              return thread;
            });
    try {
      List<CompletableFuture<Map<String, Object>>> asked = new ArrayList<>();
      for (int i = 0; i < names.size(); i++) {
        int node = i;
        asked.add(CompletableFuture.supplyAsync(() -> ask(admin, node), askers));
      }
      long deadline = System.nanoTime() + config.connectTimeout().toNanos();
      Map<String, Object> nodes = new LinkedHashMap<>();
      int reachable = 0;
      int voting = 0;
      for (int i = 0; i < names.size(); i++) {
        Map<String, Object> node = answer(asked.get(i), deadline);
        if (Boolean.TRUE.equals(node.get("reachable"))) {
          reachable++;
          if (Boolean.FALSE.equals(node.get("quarantined"))) {
            voting++;
          }
        }
        nodes.put(names.get(i), node);
      }
      Map<String, Object> details = new LinkedHashMap<>();
      details.put("quorum", config.quorum());
      details.put("reachable", reachable);
      details.put("voting", voting);
      details.put("nodes", nodes);
      return new Check(voting >= config.quorum(), details);
    } finally {
      askers.shutdownNow(); // a node still being asked ends with its socket timeout
    }
  }

  /** One node: a PING on a fresh connection, then the restart guard's view of it. */
  private static Map<String, Object> ask(RedlockAdmin admin, int index) {
    Map<String, Object> node = new LinkedHashMap<>();
    try {
      try (Jedis jedis = admin.connect(index)) {
        long start = System.nanoTime();
        jedis.ping();
        node.put("roundTripMs", (System.nanoTime() - start) / 1_000_000.0);
      }
      RedlockAdmin.GuardView guard = admin.restartGuard(index);
      // A node whose vote no client counts at all (INFO refused) sits out for good.
      Duration quarantine = guard.unknown() != null ? admin.config().maxTtl() : guard.quarantine();
      node.put("reachable", true);
      node.put("quarantined", !quarantine.isZero());
      node.put("quarantineLeftMs", quarantine.toMillis());
    } catch (RuntimeException e) {
      node.clear();
      node.put("reachable", false);
      // The socket's own timeout is connectTimeout too: the same "no answer" as the deadline's,
      // whichever of the two a frozen node meets first.
      node.put(
          "error",
          timedOut(e)
              ? noAnswer(admin.config().connectTimeout())
              : e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage());
    }
    return node;
  }

  private static boolean timedOut(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.net.SocketTimeoutException) {
        return true;
      }
    }
    return false;
  }

  private static String noAnswer(Duration connectTimeout) {
    return "no answer within connectTimeout (" + connectTimeout + ")";
  }

  private Map<String, Object> answer(CompletableFuture<Map<String, Object>> asked, long deadline) {
    try {
      return asked.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      Map<String, Object> node = new LinkedHashMap<>();
      node.put("reachable", false);
      node.put("error", noAnswer(config.connectTimeout()));
      return node;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while checking the nodes", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("checking a node failed", e.getCause()); // ask catches all
    }
  }
}
