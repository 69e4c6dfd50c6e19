package dev.redlock;

import dev.redlock.internal.LockNode;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.exceptions.JedisConnectionException;

/** An in-memory node for the algorithm's unit tests: healthy, down, slow on a fake clock, or hanging. */
final class FakeNode implements LockNode {
  enum Mode { UP, DOWN, HANG }

  final String name;
  final Map<String, String> keys = new ConcurrentHashMap<>();
  final AtomicInteger calls = new AtomicInteger();
  final AtomicInteger releases = new AtomicInteger();
  volatile Mode mode = Mode.UP;
  /** Fake clock nanos each call advances, to simulate a slow node. */
  volatile long latencyNanos;
  private final AtomicLong clock;
  final CountDownLatch unhang = new CountDownLatch(1);

  FakeNode(String name, AtomicLong clock) {
    this.name = name;
    this.clock = clock;
  }

  private void enter() {
    calls.incrementAndGet();
    clock.addAndGet(latencyNanos);
    if (mode == Mode.DOWN) {
      throw new JedisConnectionException("Failed to connect to " + name, new java.net.ConnectException("Connection refused"));
    }
    if (mode == Mode.HANG) {
      try {
        unhang.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      throw new JedisConnectionException(new java.net.SocketTimeoutException("Read timed out"));
    }
  }

  @Override
  public String name() {
    return name;
  }

  /** Fencing counters, as the acquire script keeps them. */
  final Map<String, Long> fences = new ConcurrentHashMap<>();
  /** Quarantine left in ms to answer with, or 0. */
  volatile long quarantinedMillis;

  @Override
  public long tryLock(String key, String token, long ttlMillis) {
    enter();
    if (quarantinedMillis > 0) {
      return -(quarantinedMillis + 1);
    }
    if (keys.putIfAbsent(key, token) != null) {
      return HELD;
    }
    return fences.merge(key, 1L, Long::sum);
  }

  @Override
  public boolean raiseFence(String key, String token, long fence) {
    enter();
    if (!token.equals(keys.get(key))) {
      return false;
    }
    fences.merge(key, fence, Math::max);
    return true;
  }

  @Override
  public boolean extend(String key, String token, long ttlMillis) {
    enter();
    return token.equals(keys.get(key));
  }

  @Override
  public boolean release(String key, String token) {
    releases.incrementAndGet();
    enter();
    return keys.remove(key, token);
  }

  @Override
  public void close() {}
}
