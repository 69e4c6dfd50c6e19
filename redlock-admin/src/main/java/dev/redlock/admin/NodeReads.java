package dev.redlock.admin;

import dev.redlock.Semaphore;
import dev.redlock.config.RedlockConfig;
import dev.redlock.internal.Names;
import dev.redlock.internal.TokenHash;
import dev.redlock.node.GuardProbe;
import dev.redlock.node.NodeKeys;
import dev.redlock.node.NodeUri;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Response;
import redis.clients.jedis.resps.Tuple;

/**
 * How the admin reaches a node (one short-lived connection per node and call, as the lock connects)
 * and reads its view of a lock, without writing anything. A node that cannot be read gives an entry
 * with its error: nothing here throws for a node failure.
 */
final class NodeReads {
  private final RedlockConfig config;
  private final NodeKeys keys;

  NodeReads(RedlockConfig config, NodeKeys keys) {
    this.config = config;
    this.keys = keys;
  }

  Jedis connect(NodeUri uri) {
    return uri.connect(
        config.connectTimeout(), "redlock-admin", config.tlsSocketFactory().orElse(null));
  }

  /** Node {@code uri}'s view of the lock key {@code key}; its error if it cannot be read. */
  LockStatus.Node lock(NodeUri uri, String key) {
    try (Jedis jedis = connect(uri)) {
      Duration quarantine = quarantine(jedis, uri);
      Pipeline p = jedis.pipelined();
      Response<String> token = p.get(key);
      Response<Long> pttl = p.pttl(key);
      Response<String> counter = p.get(NodeKeys.fenceKeyOfLock(key));
      p.sync();
      boolean held = token.get() != null;
      return new LockStatus.Node(
          uri.toString(),
          null,
          held,
          held ? Duration.ofMillis(Math.max(0, pttl.get())) : Duration.ZERO,
          held ? TokenHash.of(token.get()) : null,
          counter.get() == null ? 0 : Long.parseLong(counter.get()),
          quarantine);
    } catch (RuntimeException e) {
      return new LockStatus.Node(
          uri.toString(), describe(e), false, Duration.ZERO, null, 0, Duration.ZERO);
    }
  }

  /**
   * The permits from {@code permits} up to {@link Semaphore#MAX_PERMITS} whose lock key a node that
   * answers holds: a status asked with fewer permits than the clients use would otherwise
   * undercount, and a break of "every permit" leave those running. A node that cannot be read adds
   * nothing (its error is in the permits' statuses).
   */
  List<Integer> permitsHeldBeyond(List<NodeUri> uris, String name, int permits) {
    if (permits >= Semaphore.MAX_PERMITS) {
      return List.of();
    }
    // Every permit's resource, named as the semaphore names them (the name was checked already).
    String[] all = Names.permitResources(name, Semaphore.MAX_PERMITS, resource -> {});
    java.util.TreeSet<Integer> held = new java.util.TreeSet<>();
    for (NodeUri uri : uris) {
      try (Jedis jedis = connect(uri)) {
        Pipeline p = jedis.pipelined();
        List<Response<Boolean>> exists = new ArrayList<>();
        for (int i = permits; i < Semaphore.MAX_PERMITS; i++) {
          exists.add(p.exists(config.keyPrefix() + all[i]));
        }
        p.sync();
        for (int i = 0; i < exists.size(); i++) {
          if (exists.get(i).get()) {
            held.add(permits + i);
          }
        }
      } catch (RuntimeException e) {
        // unreadable: the permits' own statuses carry the node's error
      }
    }
    return List.copyOf(held);
  }

  /** Node {@code uri}'s view of a read-write lock's keys {@code rw}; its error if unreadable. */
  ReadWriteStatus.Node readWrite(NodeUri uri, String[] rw) {
    try (Jedis jedis = connect(uri)) {
      Duration quarantine = quarantine(jedis, uri);
      Pipeline p = jedis.pipelined();
      Response<String> writer = p.get(rw[0]);
      Response<Long> writerPttl = p.pttl(rw[0]);
      Response<List<Tuple>> readers = p.zrangeWithScores(rw[1], 0, -1);
      Response<Long> intentPttl = p.pttl(rw[2]);
      Response<String> counter = p.get(rw[3]);
      Response<List<String>> time = p.time();
      p.sync();
      long nowMicros =
          Long.parseLong(time.get().get(0)) * 1_000_000 + Long.parseLong(time.get().get(1));
      List<String> live = new ArrayList<>();
      long longest = 0;
      for (Tuple reader : readers.get()) {
        long expiry = (long) reader.getScore();
        if (expiry > nowMicros) { // as the scripts count them: an entry at or before TIME is dead
          live.add(TokenHash.of(reader.getElement()));
          longest = Math.max(longest, expiry - nowMicros);
        }
      }
      live.sort(null);
      boolean held = writer.get() != null;
      return new ReadWriteStatus.Node(
          uri.toString(),
          null,
          held,
          held ? Duration.ofMillis(Math.max(0, writerPttl.get())) : Duration.ZERO,
          held ? TokenHash.of(writer.get()) : null,
          live,
          Duration.ofNanos(longest * 1000),
          Duration.ofMillis(Math.max(0, intentPttl.get())),
          counter.get() == null ? 0 : Long.parseLong(counter.get()),
          quarantine);
    } catch (RuntimeException e) {
      return new ReadWriteStatus.Node(
          uri.toString(),
          describe(e),
          false,
          Duration.ZERO,
          null,
          List.of(),
          Duration.ZERO,
          Duration.ZERO,
          0,
          Duration.ZERO);
    }
  }

  /** The guard's quarantine of the node {@code jedis} reaches; maxTtl if it cannot vote at all. */
  private Duration quarantine(Jedis jedis, NodeUri uri) {
    GuardProbe.View view = GuardProbe.of(jedis, keys, uri.database());
    return view.unknown() != null ? config.maxTtl() : view.quarantine();
  }

  static String describe(RuntimeException e) {
    String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    Throwable cause = e.getCause();
    if (cause != null && cause.getMessage() != null && !message.contains(cause.getMessage())) {
      message += ": " + cause.getMessage();
    }
    return message;
  }
}
