package dev.redlock;

import dev.redlock.node.Exchange;
import dev.redlock.node.LockNode;
import dev.redlock.node.NodeRequest;
import dev.redlock.spi.LeaseRequest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.exceptions.JedisConnectionException;

/**
 * An in-memory node for the algorithm's unit tests: healthy, down, slow on a fake clock, or
 * hanging. Requests are applied one at a time, as a Redis node runs its scripts. Keys never expire
 * unless {@link #expiryClock} is set: then a key lives for the ttl its acquire or extend gave it
 * (PX), on that clock, as the contract suite over the fake cluster needs.
 */
final class FakeNode implements LockNode {
  enum Mode {
    UP,
    DOWN,
    /** Takes requests and never answers; even a bounded wait for readiness hangs (stuck I/O). */
    HANG,
    /** Takes requests and never answers; a bounded wait for readiness times out (a frozen node). */
    SILENT
  }

  final String name;
  final Map<String, String> keys = new ConcurrentHashMap<>();
  final AtomicInteger calls = new AtomicInteger();
  final AtomicInteger releases = new AtomicInteger();
  volatile Mode mode = Mode.UP;

  /**
   * How many readiness checks a reply needs before it shows as arrived: a node whose answer is on
   * its way when the waiting thread first looks.
   */
  volatile int pollsBeforeReady;

  /**
   * A node with no idle connection whose handshake never completes (a frozen process accepts the
   * TCP connection and never answers): begin() blocks until unhung, then fails.
   */
  volatile boolean connectHangs;

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
      throw new JedisConnectionException(
          "Failed to connect to " + name, new java.net.ConnectException("Connection refused"));
    }
  }

  @Override
  public String name() {
    return name;
  }

  /** Fencing counters, as the acquire script keeps them. */
  final Map<String, Long> fences = new ConcurrentHashMap<>();

  /**
   * The node's clock in µs, from which the acquire script takes a token when it is past the
   * counter; null for a node whose tokens always come from the counter (reported as "ahead").
   */
  volatile java.util.function.LongSupplier clockMicros;

  /**
   * The clock (nanoseconds) on which keys expire by their ttl, or null (the default) for keys that
   * live until released: the algorithm's unit tests count on that.
   */
  volatile java.util.function.LongSupplier expiryClock;

  /**
   * When each key expires on {@link #expiryClock}, for the keys an acquire or extend gave a ttl.
   */
  private final Map<String, Long> expiresAt = new java.util.HashMap<>();

  /** Whether the node holds {@code key} now (not released, not expired). */
  synchronized boolean holds(String key) {
    expire(key);
    return keys.containsKey(key);
  }

  /** Drops {@code key} if its ttl has passed on {@link #expiryClock}. */
  private void expire(String key) {
    java.util.function.LongSupplier now = expiryClock;
    Long deadline = expiresAt.get(key);
    if (now != null && deadline != null && now.getAsLong() - deadline >= 0) {
      keys.remove(key);
      expiresAt.remove(key);
    }
  }

  /**
   * Makes {@code key} live at least {@code ttlMillis} more, if keys expire on this node: never
   * shorter, as extend.lua (PTTL, then PEXPIRE only if longer); a new key has no ttl yet.
   */
  private void expireIn(String key, long ttlMillis) {
    java.util.function.LongSupplier now = expiryClock;
    if (now != null) {
      long deadline = now.getAsLong() + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
      expiresAt.merge(key, deadline, (old, proposed) -> proposed - old > 0 ? proposed : old);
    }
  }

  /** Quarantine left in ms to answer with, or 0. */
  volatile long quarantinedMillis;

  /**
   * Applies the request at once and answers at once, like a healthy node; a node in HANG mode takes
   * the request but never answers within any timeout (it answers a timeout after 10 s, or when
   * unhung), like I/O that is stuck below the socket timeout's reach.
   */
  @Override
  public boolean hasIdleConnection() {
    return !connectHangs;
  }

  @Override
  public Exchange begin(NodeRequest request) {
    if (connectHangs) {
      try {
        unhang.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      throw new JedisConnectionException(new java.net.SocketTimeoutException("connect timed out"));
    }
    enter();
    if (mode == Mode.HANG || mode == Mode.SILENT) {
      boolean stuck = mode == Mode.HANG;
      return new Exchange() {
        @Override
        public boolean ready() {
          return false;
        }

        @Override
        public boolean awaitReady(long timeoutNanos) {
          if (stuck) {
            try {
              unhang.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return true; // then finish() reports the failure
          }
          return false; // silent for the whole slice
        }

        @Override
        public long finish(long timeoutNanos) {
          try {
            unhang.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          throw new JedisConnectionException(new java.net.SocketTimeoutException("Read timed out"));
        }
      };
    }
    long reply = apply(request);
    AtomicInteger polls = new AtomicInteger(pollsBeforeReady);
    return new Exchange() {
      @Override
      public boolean ready() {
        return polls.getAndDecrement() <= 0;
      }

      @Override
      public long finish(long timeoutNanos) {
        return reply;
      }
    };
  }

  private synchronized long apply(NodeRequest r) {
    if (r.isMulti()) {
      return applyToAll(r);
    }
    if (r.shape() == LeaseRequest.Shape.READ
        || (r.shape() == LeaseRequest.Shape.WRITE && r.verb() == NodeRequest.Verb.ACQUIRE)) {
      return applyReadWrite(r);
    }
    String key = r.key();
    String token = r.token();
    expire(key);
    switch (r.verb()) {
      case ACQUIRE:
        if (quarantinedMillis > 0) {
          return -(quarantinedMillis + 1);
        }
        if (keys.putIfAbsent(key, token) != null) {
          return 0; // held by another owner
        }
        expireIn(key, r.argument());
        java.util.function.LongSupplier clock = clockMicros;
        long now = clock == null ? Long.MIN_VALUE : clock.getAsLong();
        long counter = fences.getOrDefault(key, 0L);
        boolean ahead = counter >= now;
        long fence = ahead ? counter + 1 : now;
        fences.put(key, fence);
        return fence * 2 + (ahead ? 1 : 0); // as the acquire script replies
      case RAISE_FENCE:
        if (!token.equals(keys.get(key))) {
          return 0;
        }
        fences.merge(key, r.argument(), Math::max);
        return 1;
      case EXTEND:
        if (!token.equals(keys.get(key))) {
          return 0;
        }
        expireIn(key, r.argument());
        return 1;
      case RELEASE:
        releases.incrementAndGet();
        if (!keys.remove(key, token)) {
          return 0;
        }
        expiresAt.remove(key);
        fences.merge(key, r.argument(), Math::max); // the release raises the counter to the token
        return 1;
      default:
        throw new IllegalArgumentException(r.verb().toString());
    }
  }

  /** A request about several keys, as the *_all.lua scripts run it: all or nothing per node. */
  private long applyToAll(NodeRequest r) {
    String token = r.token();
    int n = r.keyCount();
    for (int i = 0; i < n; i++) {
      expire(r.key(i));
    }
    switch (r.verb()) {
      case ACQUIRE:
        {
          if (quarantinedMillis > 0) {
            return -(quarantinedMillis + 1);
          }
          for (int i = 0; i < n; i++) {
            if (keys.containsKey(r.key(i))) {
              return 0; // one is held: none is taken
            }
          }
          java.util.function.LongSupplier clock = clockMicros;
          long now = clock == null ? Long.MIN_VALUE : clock.getAsLong();
          long largest = Long.MIN_VALUE;
          for (int i = 0; i < n; i++) {
            keys.put(r.key(i), token);
            expireIn(r.key(i), r.argument());
            largest = Math.max(largest, fences.getOrDefault(r.key(i), 0L));
          }
          boolean ahead = largest >= now;
          long fence = ahead ? largest + 1 : now;
          for (int i = 0; i < n; i++) {
            fences.put(r.key(i), fence);
          }
          return fence * 2 + (ahead ? 1 : 0);
        }
      case RAISE_FENCE:
      case EXTEND:
        for (int i = 0; i < n; i++) {
          if (!token.equals(keys.get(r.key(i)))) {
            return 0;
          }
        }
        for (int i = 0; i < n; i++) {
          if (r.verb() == NodeRequest.Verb.EXTEND) {
            expireIn(r.key(i), r.argument());
          } else {
            fences.merge(r.key(i), r.argument(), Math::max);
          }
        }
        return 1;
      case RELEASE:
        {
          releases.incrementAndGet();
          int deleted = 0;
          for (int i = 0; i < n; i++) {
            if (keys.remove(r.key(i), token)) {
              expiresAt.remove(r.key(i));
              fences.merge(r.key(i), r.argument(), Math::max);
              deleted++;
            }
          }
          return deleted;
        }
      default:
        throw new IllegalArgumentException(r.verb().toString());
    }
  }

  /**
   * A read-write lock's request, as read_*.lua and write_acquire.lua run it (a writer's other
   * requests are the one-key ones on its writer key): a reader's entry is the key {@code readers +
   * "\0" + token}, with its own ttl; the intent mark a key with the writer's ttl; the one counter
   * is the writer key's.
   */
  private long applyReadWrite(NodeRequest r) {
    String writer = r.key(0);
    String readers = r.key(1) + "\0";
    String intent = r.key(2);
    String entry = readers + r.token();
    expire(writer);
    expire(intent);
    expire(entry);
    switch (r.verb()) {
      case ACQUIRE:
        {
          if (quarantinedMillis > 0) {
            return -(quarantinedMillis + 1);
          }
          if (r.shape() == LeaseRequest.Shape.WRITE) {
            boolean readerLive = false;
            for (String k : java.util.List.copyOf(keys.keySet())) {
              if (k.startsWith(readers)) {
                expire(k);
                readerLive |= keys.containsKey(k);
              }
            }
            if (keys.containsKey(writer) || readerLive) {
              if (r.intentMillis() > 0) {
                keys.put(intent, "1");
                expireIn(intent, r.intentMillis());
              }
              return 0;
            }
            keys.put(writer, r.token());
            expireIn(writer, r.argument());
            keys.remove(intent);
            expiresAt.remove(intent);
          } else {
            if (keys.containsKey(writer) || keys.containsKey(intent)) {
              return 0;
            }
            keys.put(entry, r.token());
            expireIn(entry, r.argument());
          }
          java.util.function.LongSupplier clock = clockMicros;
          long now = clock == null ? Long.MIN_VALUE : clock.getAsLong();
          long counter = fences.getOrDefault(writer, 0L);
          boolean ahead = counter >= now;
          long fence = ahead ? counter + 1 : Math.max(now, counter); // never back
          fences.put(writer, fence);
          return fence * 2 + (ahead ? 1 : 0);
        }
      case RAISE_FENCE:
        if (!keys.containsKey(entry)) {
          return 0;
        }
        fences.merge(writer, r.argument(), Math::max);
        return 1;
      case EXTEND:
        if (!keys.containsKey(entry)) {
          return 0;
        }
        expireIn(entry, r.argument());
        return 1;
      case RELEASE:
        releases.incrementAndGet();
        if (keys.remove(entry) == null) {
          return 0;
        }
        expiresAt.remove(entry);
        fences.merge(writer, r.argument(), Math::max);
        return 1;
      default:
        throw new IllegalArgumentException(r.verb().toString());
    }
  }

  @Override
  public void close() {}
}
