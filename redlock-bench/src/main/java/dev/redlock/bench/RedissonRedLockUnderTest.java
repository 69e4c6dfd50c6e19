package dev.redlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.RedissonRedLock;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** The peer: Redisson 3.52's RedissonRedLock over one client per node. */
final class RedissonRedLockUnderTest implements LockUnderTest {
  private final List<RedissonClient> clients = new ArrayList<>();

  RedissonRedLockUnderTest(List<String> uris) {
    for (String uri : uris) {
      Config config = new Config();
      config
          .useSingleServer()
          .setAddress(uri)
          .setConnectionMinimumIdleSize(2)
          .setConnectionPoolSize(16);
      clients.add(Redisson.create(config));
    }
  }

  // Redisson deprecates its RedLock, but it is the peer its users run: the one to compare against.
  @SuppressWarnings("deprecation")
  RLock lock(String key) {
    RLock[] locks = new RLock[clients.size()];
    for (int i = 0; i < locks.length; i++) {
      locks[i] = clients.get(i).getLock(key);
    }
    return new RedissonRedLock(locks);
  }

  @Override
  public String name() {
    return "Redisson 3.52 RedissonRedLock";
  }

  @Override
  public void cycle(String key) throws InterruptedException {
    RLock lock = lock(key);
    if (!lock.tryLock(1000, 30_000, TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException("not free: " + key);
    }
    lock.unlock();
  }

  @Override
  public void close() {
    clients.forEach(RedissonClient::shutdown);
  }
}
