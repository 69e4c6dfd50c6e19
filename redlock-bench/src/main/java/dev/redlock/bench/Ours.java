package dev.redlock.bench;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.RedlockConfig;
import java.time.Duration;
import java.util.List;

/** This library: one tryAcquire and one release per cycle. */
final class Ours implements LockUnderTest {
  static final Duration TTL = Duration.ofSeconds(30);
  private final Redlock redlock;

  Ours(List<String> uris) {
    this.redlock = Redlock.create(RedlockConfig.builder().nodes(uris).build());
  }

  Redlock redlock() {
    return redlock;
  }

  @Override
  public String name() {
    return "redlock (this library)";
  }

  @Override
  public void cycle(String key) {
    Lease lease =
        redlock
            .tryAcquire(key, TTL)
            .orElseThrow(() -> new IllegalStateException("not free: " + key));
    lease.release();
  }

  @Override
  public void close() {
    redlock.close();
  }
}
