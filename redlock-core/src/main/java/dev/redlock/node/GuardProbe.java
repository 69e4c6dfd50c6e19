package dev.redlock.node;

import dev.redlock.script.Script;
import java.time.Duration;
import java.util.List;
import redis.clients.jedis.Jedis;

/**
 * What the restart guard's next acquire on a node would decide, asked without writing anything: the
 * node's life read as a lock connection reads it ({@link NodeLife}), then the acquire scripts' own
 * guard text run read-only (guard_probe.lua). For {@code redlock status} and {@code doctor}.
 */
public final class GuardProbe {
  private GuardProbe() {}

  /**
   * The guard's view of one node.
   *
   * @param quarantine how long the next acquire would keep the node out of votes; zero: it votes
   * @param why what the guard found: {@code trusted}, {@code no marker}, {@code foreign marker}
   *     (stamped by another process, database or deployment), {@code data replaced} (the marker
   *     came back with a copy of the data), {@code restarted durable} (a restart from an fsynced
   *     AOF, adopted); or why the node cannot vote at all ({@code unknown})
   * @param marker the life marker's value, or null
   * @param unknown why no client counts this node's vote (INFO refused), or null
   */
  public record View(Duration quarantine, String why, String marker, String unknown) {}

  /**
   * Asks the node {@code jedis} is connected to (on {@code database}) what the guard of clients
   * using {@code keys} would decide now.
   *
   * @throws RuntimeException what Jedis throws if the node cannot be reached or refuses EVAL
   */
  public static View of(Jedis jedis, NodeKeys keys, int database) {
    NodeLife life = NodeLife.read(jedis.getConnection());
    if (life.unknown() != null) {
      return new View(Duration.ZERO, "unknown", null, life.unknown());
    }
    List<String> args = new java.util.ArrayList<>(List.of("", "", keys.maxTtlMillisText(), "1"));
    args.addAll(life.scriptArgs(keys, database));
    List<?> reply =
        (List<?>)
            jedis.eval(
                Script.GUARD_PROBE.source(), List.of(keys.lifeKey(), keys.witnessKey()), args);
    Duration left = keys.guard() ? Duration.ofMillis((Long) reply.get(0)) : Duration.ZERO;
    return new View(left, (String) reply.get(1), (String) reply.get(2), null);
  }
}
