package dev.redlock.bench;

import dev.redlock.Lease;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
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

  /**
   * One acquire + release, waiting up to 1 s as Redisson's cycle does ({@code tryLock(1 s, …)}):
   * re-taking the same resource at once can find this client's own release not yet confirmed by a
   * node that was slow to answer it (the release returns on a quorum, or at the node timeout), and
   * a try would then report it held. Issue 15's same-resource work is about exactly that.
   */
  @Override
  public void cycle(String key) throws InterruptedException {
    Lease lease = redlock.acquire(key, TTL, MAX_WAIT);
    lease.release();
  }

  static final Duration MAX_WAIT = Duration.ofSeconds(1);

  @Override
  public void close() {
    redlock.close();
  }

  /** The same library, a set of two resources per cycle ({@code acquireAll}): issue 17's row. */
  static final class SetOfTwo implements LockUnderTest {
    private final Redlock redlock;

    SetOfTwo(List<String> uris) {
      this.redlock = Redlock.create(RedlockConfig.builder().nodes(uris).build());
    }

    @Override
    public String name() {
      return "redlock, a set of two resources (acquireAll)";
    }

    @Override
    public void cycle(String key) throws InterruptedException {
      Lease lease = redlock.acquireAll(java.util.Set.of(key + ":a", key + ":b"), TTL, MAX_WAIT);
      lease.release();
    }

    @Override
    public void close() {
      redlock.close();
    }
  }

  /**
   * The same library, a permit of a semaphore of 2 per cycle ({@code semaphore(key, 2).acquire}):
   * issue 17 item 2's row. Nobody else holds a permit, so a cycle asks one permit's mutex.
   */
  static final class Permit implements LockUnderTest {
    private final Redlock redlock;

    Permit(List<String> uris) {
      this.redlock = Redlock.create(RedlockConfig.builder().nodes(uris).build());
    }

    @Override
    public String name() {
      return "redlock, a permit of a semaphore of 2 (semaphore.acquire)";
    }

    @Override
    public void cycle(String key) throws InterruptedException {
      Lease lease = redlock.semaphore(key, 2).acquire(TTL, MAX_WAIT);
      lease.release();
    }

    @Override
    public void close() {
      redlock.close();
    }
  }

  /**
   * The same library, one side of a read-write lock per cycle ({@code readLock()} or {@code
   * writeLock()} of {@code readWriteLock(key)}): issue 17's row.
   */
  static final class ReadWriteSide implements LockUnderTest {
    private final Redlock redlock;
    private final boolean write;

    ReadWriteSide(List<String> uris, boolean write) {
      this.redlock = Redlock.create(RedlockConfig.builder().nodes(uris).build());
      this.write = write;
    }

    @Override
    public String name() {
      return write
          ? "redlock, write side of a read-write lock"
          : "redlock, read side of a read-write lock";
    }

    @Override
    public void cycle(String key) throws InterruptedException {
      dev.redlock.ReadWriteLock rw = redlock.readWriteLock(key);
      Lease lease = (write ? rw.writeLock() : rw.readLock()).acquire(TTL, MAX_WAIT);
      lease.release();
    }

    @Override
    public void close() {
      redlock.close();
    }
  }
}
