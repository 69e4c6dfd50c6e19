package dev.redlock.spring;

import dev.redlock.RedlockConfig;
import dev.redlock.admin.LockStatus;
import dev.redlock.admin.RedlockAdmin;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import redis.clients.jedis.Jedis;

/**
 * What the health indicators report, whatever Spring Boot's health API: each node's reachability
 * and round trip (a {@code PING} on a fresh connection, as {@code redlock doctor} does) and its
 * quarantine ({@link RedlockAdmin#status}'s view of the restart guard); up while at least a quorum
 * of nodes answer.
 *
 * <p>A quarantined node answers but does not vote: the check stays up, and {@code voting} (nodes
 * that answer and are not quarantined) says whether a lock can be won now. A new node shows the
 * full {@code maxTtl} until a first acquisition starts its quarantine, unless vouched for.
 */
public final class NodesHealth {
  /** The resource whose key {@link RedlockAdmin#status} reads; nothing is ever written to it. */
  static final String PROBE = "redlock-health-probe";

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
   * @param up whether at least a quorum of nodes answered
   * @param details what to show: quorum, reachable, voting, and per node its reachability, round
   *     trip, quarantine or error
   */
  public record Check(boolean up, Map<String, Object> details) {}

  /** Checks every node now, one after the other; a node that does not answer costs its timeout. */
  public Check check() {
    try (RedlockAdmin admin = RedlockAdmin.create(config)) {
      List<String> names = admin.nodes();
      List<LockStatus.Node> views = admin.status(PROBE).nodes();
      Map<String, Object> nodes = new LinkedHashMap<>();
      int reachable = 0;
      int voting = 0;
      for (int i = 0; i < names.size(); i++) {
        Map<String, Object> node = new LinkedHashMap<>();
        String error = null;
        try (Jedis jedis = admin.connect(i)) {
          long start = System.nanoTime();
          jedis.ping();
          node.put("roundTripMs", (System.nanoTime() - start) / 1_000_000.0);
        } catch (RuntimeException e) {
          error = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        }
        LockStatus.Node view = views.get(i);
        if (error == null && !view.reachable()) {
          error = view.error();
        }
        node.put("reachable", error == null);
        if (error == null) {
          reachable++;
          Duration quarantine = view.quarantine();
          node.put("quarantined", !quarantine.isZero());
          node.put("quarantineLeftMs", quarantine.toMillis());
          if (quarantine.isZero()) {
            voting++;
          }
        } else {
          node.put("error", error);
        }
        nodes.put(names.get(i), node);
      }
      Map<String, Object> details = new LinkedHashMap<>();
      details.put("quorum", config.quorum());
      details.put("reachable", reachable);
      details.put("voting", voting);
      details.put("nodes", nodes);
      return new Check(reachable >= config.quorum(), details);
    }
  }
}
