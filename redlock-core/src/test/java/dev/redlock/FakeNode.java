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

  @Override
  public boolean tryLock(String key, String token, long ttlMillis) {
    enter();
    return keys.putIfAbsent(key, token) == null;
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
