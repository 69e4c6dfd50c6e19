package dev.redlock.it;

import static org.awaitility.Awaitility.await;

import dev.redlock.testkit.RedisNode;
import java.time.Duration;
import java.util.Arrays;
import redis.clients.jedis.Jedis;

/** Direct, short-lived admin access to one node, to look at what the lock left there. */
final class Admin {
  private Admin() {}

  static Jedis on(RedisNode node) {
    Jedis jedis = new Jedis("127.0.0.1", node.port(), 2000);
    jedis.clientSetname("admin");
    return jedis;
  }

  static String get(RedisNode node, String key) {
    try (Jedis jedis = on(node)) {
      return jedis.get(key);
    }
  }

  static long pttl(RedisNode node, String key) {
    try (Jedis jedis = on(node)) {
      return jedis.pttl(key);
    }
  }

  static void set(RedisNode node, String key, String value) {
    try (Jedis jedis = on(node)) {
      jedis.set(key, value);
    }
  }

  /** Connections named like ours ({@code redlock}) that the node still has open. */
  static long redlockClients(RedisNode node) {
    try (Jedis jedis = on(node)) {
      return Arrays.stream(jedis.clientList().split("\n"))
          .filter(line -> line.contains(" name=redlock "))
          .count();
    }
  }

  /** Runs a script that never ends on {@code node}, until it answers BUSY to everyone else. */
  static Thread busyScript(RedisNode node) {
    try (Jedis admin = Admin.on(node)) {
      admin.configSet("lua-time-limit", "50");
    }
    Thread busy =
        new Thread(
            () -> {
              try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 30_000)) {
                jedis.eval("local t = redis.call('TIME') while true do end", 0);
              } catch (RuntimeException expected) {
                // killed
              }
            });
    busy.start();
    await()
        .atMost(Duration.ofSeconds(30))
        .ignoreExceptions()
        .until(
            () -> {
              try (Jedis probe = new Jedis("127.0.0.1", node.port(), 2000)) {
                probe.ping();
                return false;
              } catch (redis.clients.jedis.exceptions.JedisBusyException e) {
                return true;
              }
            });
    return busy;
  }

  static void killScript(RedisNode node) {
    try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 2000)) {
      jedis.scriptKill();
      jedis.configSet("lua-time-limit", "5000");
    } catch (redis.clients.jedis.exceptions.JedisDataException notBusy) {
      // NOTBUSY: nothing runs
    }
  }
}
