package dev.redlock;

import dev.redlock.script.Script;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import redis.clients.jedis.commands.ScriptingKeyCommands;
import redis.clients.jedis.exceptions.JedisNoScriptException;

/**
 * The protected side of fencing, for a value kept in Redis: a write carries the writer's {@link
 * Lease#fencingToken()}, and is applied only if that token is newer than every token that wrote
 * before. A holder that paused past its lease and wakes up with an old token is refused, even
 * though it still believes it holds the lock.
 *
 * <pre>{@code
 * try (Lease lease = redlock.acquire("ledger:7", ttl, maxWait)) {
 *   if (!FencedWrites.setIfNewer(jedis, "ledger:7:balance", "1250.00", lease.fencingToken())) {
 *     throw new IllegalStateException("a newer holder already wrote: stop");
 *   }
 * }
 * }</pre>
 *
 * <p>The value lives in a hash at {@code key} with fields {@code fence} and {@code value}. The
 * Redis holding it is the protected resource, not one of the lock nodes (though it may be). For
 * SQL, the same check is a condition on the update: see {@code docs/fencing.md}.
 */
public final class FencedWrites {
  private FencedWrites() {}

  /**
   * Sets {@code key} to {@code value} only if {@code fencingToken} is greater than the token of
   * every earlier write to it; atomic on the server (one Lua script).
   *
   * @param redis a Jedis client ({@code Jedis}, {@code JedisPooled}, {@code UnifiedJedis}, ...)
   * @param key the protected value's key
   * @param value the new value
   * @param fencingToken the writer's {@link Lease#fencingToken()}
   * @return true if written; false if refused because an equal or newer token already wrote
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if {@code fencingToken} is not positive
   */
  public static boolean setIfNewer(
      ScriptingKeyCommands redis, String key, String value, long fencingToken) {
    Objects.requireNonNull(redis, "redis must not be null");
    Objects.requireNonNull(key, "key must not be null");
    Objects.requireNonNull(value, "value must not be null");
    if (fencingToken <= 0) {
      throw new IllegalArgumentException("fencingToken must be > 0, was " + fencingToken);
    }
    List<String> keys = List.of(key);
    List<String> args = List.of(Long.toString(fencingToken), value);
    Object reply;
    try {
      reply = redis.evalsha(Script.FENCED_SET.sha1(), keys, args);
    } catch (JedisNoScriptException e) {
      reply = redis.eval(Script.FENCED_SET.source(), keys, args);
    }
    return Long.valueOf(1).equals(reply);
  }

  /**
   * Reads a value written by {@link #setIfNewer}.
   *
   * @return the value, or empty if none was written
   */
  public static Optional<String> get(redis.clients.jedis.commands.HashCommands redis, String key) {
    Objects.requireNonNull(redis, "redis must not be null");
    Objects.requireNonNull(key, "key must not be null");
    return Optional.ofNullable(redis.hget(key, "value"));
  }

  /** The token of the last accepted write, or 0 if none. */
  public static long lastToken(redis.clients.jedis.commands.HashCommands redis, String key) {
    Objects.requireNonNull(redis, "redis must not be null");
    Objects.requireNonNull(key, "key must not be null");
    String fence = redis.hget(key, "fence");
    return fence == null ? 0 : Long.parseLong(fence);
  }
}
