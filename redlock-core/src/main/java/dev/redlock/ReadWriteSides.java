package dev.redlock;

import dev.redlock.spi.LeaseRequest.Shape;
import dev.redlock.spi.LeaseStore;
import java.time.Duration;
import java.util.Optional;

/**
 * A read-write lock of an engine: its two sides, each the plain lock's three ways in ({@code
 * tryAcquire}, {@code acquire}, {@code withLock}) on a {@link Target} of that side.
 */
final class ReadWriteSides<H extends LeaseStore.Held> implements ReadWriteLock {
  private final String name;
  private final Side read;
  private final Side write;

  ReadWriteSides(Acquisitions<H> locks, LeaseEngine<H> engine, String name) {
    this.name = name;
    this.read = new OneSide<>(locks, engine, Target.side(name, Shape.READ));
    this.write = new OneSide<>(locks, engine, Target.side(name, Shape.WRITE));
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Side readLock() {
    return read;
  }

  @Override
  public Side writeLock() {
    return write;
  }

  @Override
  public String toString() {
    return "ReadWriteLock[" + name + "]";
  }

  /** One side; equal only to itself, as any lock object. */
  private static final class OneSide<H extends LeaseStore.Held> implements Side {
    private final Acquisitions<H> locks;
    private final LeaseEngine<H> engine;
    private final Target side;

    OneSide(Acquisitions<H> locks, LeaseEngine<H> engine, Target side) {
      this.locks = locks;
      this.engine = engine;
      this.side = side;
    }

    @Override
    public Optional<Lease> tryAcquire(Duration ttl) {
      engine.ensureOpen();
      return locks.tryOnce(side, engine.arguments.ttl(ttl)); // one attempt: keeps no reader out
    }

    @Override
    public Lease acquire(Duration ttl, Duration maxWait) throws InterruptedException {
      engine.ensureOpen();
      return locks.acquire(side, engine.arguments.ttl(ttl), maxWait);
    }

    @Override
    public <T, E extends Exception> T withLock(Duration ttl, Duration maxWait, LeaseTask<T, E> task)
        throws E, InterruptedException {
      locks.checkRenewable(task, ttl);
      return Acquisitions.runRenewed(acquire(ttl, maxWait), task);
    }

    @Override
    public String toString() {
      return "ReadWriteLock["
          + side.name()
          + "]."
          + (side.shape() == Shape.READ ? "readLock()" : "writeLock()");
    }
  }
}
