package dev.redlock.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPubSub;

/**
 * One node's release announcements on a connection and a daemon thread of their own, started with
 * the first key and kept until closed. A dropped connection is made again (with a growing pause, up
 * to 2 s) and every key subscribed again; what was announced meanwhile is lost, which waiters
 * survive by polling. Subscribing and unsubscribing are writes on the connection, serialised here;
 * the thread only reads.
 */
final class JedisSubscription implements KeySubscription {
  private static final Logger log = LoggerFactory.getLogger(JedisSubscription.class);

  /** Subscribed first, so the connection's subscription starts before any key is wanted. */
  private static final String NO_KEY = "@redlock:announcements";

  private final String name;
  private final HostAndPort address;
  private final JedisClientConfig config;
  private final Consumer<String> released;
  private final Set<String> keys = ConcurrentHashMap.newKeySet();
  private final ReentrantLock writes = new ReentrantLock();
  private volatile Listener current; // the connection's listener while subscribed
  private volatile Jedis connection;
  private volatile boolean closed;
  private Thread thread; // guarded by writes

  JedisSubscription(
      String name, HostAndPort address, JedisClientConfig config, Consumer<String> released) {
    this.name = name;
    this.address = address;
    this.config = config;
    this.released = released;
  }

  @Override
  public void add(String key) {
    writes.lock();
    try {
      if (closed) {
        return;
      }
      keys.add(key);
      if (thread == null) {
        thread = new Thread(this::run, "redlock-notices-" + address);
        thread.setDaemon(true);
        thread.start();
        return; // the thread subscribes every key once connected
      }
      Listener listener = current;
      if (listener != null && listener.isSubscribed()) {
        listener.subscribe(key);
      }
    } catch (RuntimeException e) {
      log.debug(
          "could not subscribe to {} on {}: {}",
          key,
          name,
          e.toString()); // resubscribed on reconnect
    } finally {
      writes.unlock();
    }
  }

  @Override
  public void remove(String key) {
    writes.lock();
    try {
      keys.remove(key);
      Listener listener = current;
      if (listener != null && listener.isSubscribed()) {
        listener.unsubscribe(key);
      }
    } catch (RuntimeException e) {
      log.debug("could not unsubscribe from {} on {}: {}", key, name, e.toString());
    } finally {
      writes.unlock();
    }
  }

  private void run() {
    long pauseMillis = 50;
    while (!closed) {
      try (Jedis jedis = new Jedis(address, config)) {
        connection = jedis;
        if (closed) {
          return;
        }
        Listener listener = new Listener();
        current = listener;
        jedis.subscribe(listener, NO_KEY); // until closed or the connection fails
      } catch (RuntimeException e) {
        if (!closed) {
          log.debug("release announcements from {} interrupted: {}", name, e.toString());
        }
      } finally {
        current = null;
        connection = null;
      }
      if (closed) {
        return;
      }
      try {
        TimeUnit.MILLISECONDS.sleep(pauseMillis);
      } catch (InterruptedException e) {
        return; // closed
      }
      pauseMillis = Math.min(2000, pauseMillis * 2);
    }
  }

  /** The subscribed connection: hands announcements on, and subscribes the wanted keys. */
  private final class Listener extends JedisPubSub {
    @Override
    public void onSubscribe(String channel, int subscribedChannels) {
      if (NO_KEY.equals(
          channel)) { // connected: every key wanted now, including those added meanwhile
        writes.lock();
        try {
          if (!keys.isEmpty()) {
            subscribe(keys.toArray(new String[0]));
          }
        } finally {
          writes.unlock();
        }
      }
    }

    @Override
    public void onMessage(String channel, String message) {
      try {
        released.accept(channel);
      } catch (RuntimeException e) {
        log.error("a release announcement's listener threw", e);
      }
    }
  }

  @Override
  public void close() {
    Thread t;
    writes.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      t = thread;
    } finally {
      writes.unlock();
    }
    Jedis jedis = connection;
    if (jedis != null) {
      jedis.disconnect(); // unblocks the thread's read, whatever the node does (frozen, say)
    }
    if (t != null) {
      t.interrupt(); // a pause between connections
      try {
        t.join(TimeUnit.SECONDS.toMillis(2));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
