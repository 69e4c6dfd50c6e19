package dev.redlock.spring;

import dev.redlock.Lease;
import java.time.Duration;
import java.time.LocalDate;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.scheduling.annotation.Scheduled;

/** A bean with one {@link Locked} method per behaviour the tests look at. */
public class Jobs {
  // Read through methods: the bean the tests get is a proxy, whose own fields are not these.
  private final AtomicInteger settled = new AtomicInteger();
  private final AtomicInteger busyRuns = new AtomicInteger();
  private final AtomicInteger quickRuns = new AtomicInteger();
  private volatile Runnable duringSettle = () -> {};

  /** How many times {@link #settle} ran its body. */
  public int settled() {
    return settled.get();
  }

  /** How many times a method on the "busy" resource ran its body. */
  public int busyRuns() {
    return busyRuns.get();
  }

  /** How many times {@link #quick} ran its body. */
  public int quickRuns() {
    return quickRuns.get();
  }

  /** Sets what runs inside {@link #settle}, while the lock is held: what the test checks there. */
  public void duringSettle(Runnable check) {
    this.duringSettle = check;
  }

  @Locked(resource = "settlement:#{#date}", ttl = "5s")
  public String settle(LocalDate date) {
    settled.incrementAndGet();
    duringSettle.run();
    return CurrentLease.get().resource();
  }

  @Locked(resource = "token:#{#p0}", ttl = "${jobs.token-ttl:5s}")
  public long token(String name) {
    return CurrentLease.fencingToken();
  }

  @Locked(resource = "busy", ttl = "5s")
  public String throwsWhenBusy() {
    busyRuns.incrementAndGet();
    return "ran";
  }

  @Locked(resource = "busy", ttl = "5s", whenNotAcquired = Locked.NotAcquired.SKIP)
  public String skipsWhenBusy() {
    busyRuns.incrementAndGet();
    return "ran";
  }

  @Locked(resource = "busy", ttl = "5s", whenNotAcquired = Locked.NotAcquired.THROW)
  @Scheduled(initialDelay = 1, fixedDelay = 1, timeUnit = TimeUnit.HOURS)
  public void scheduledButThrows() {
    busyRuns.incrementAndGet();
  }

  /** Never fires during a test: called by hand to see the policy {@code @Scheduled} gets. */
  @Locked(resource = "busy", ttl = "5s")
  @Scheduled(initialDelay = 1, fixedDelay = 1, timeUnit = TimeUnit.HOURS)
  public void scheduledSkipsWhenBusy() {
    busyRuns.incrementAndGet();
  }

  /**
   * Works for three ttls, checking its lease before each step as a job should; returns how long it
   * held the lease.
   */
  @Locked(resource = "long", ttl = "400ms")
  public Duration outlivesItsTtl() throws InterruptedException {
    Lease lease = CurrentLease.get();
    long start = System.nanoTime();
    for (int step = 0; step < 12; step++) {
      TimeUnit.MILLISECONDS.sleep(100); // the job's own work: one batch
      lease.checkValid();
    }
    return Duration.ofNanos(System.nanoTime() - start);
  }

  /** Returns at once; the lock stays held a second from its grant. */
  @Locked(
      resource = "quick",
      ttl = "5s",
      lockAtLeastFor = "1s",
      whenNotAcquired = Locked.NotAcquired.SKIP)
  public Long quick() {
    quickRuns.incrementAndGet();
    return CurrentLease.fencingToken();
  }

  /** A ttl too short to renew, with a hold after: refused, and nothing is held. */
  @Locked(resource = "short", ttl = "60ms", lockAtLeastFor = "5s")
  public void tooShortToRenew() {
    throw new AssertionError("never runs");
  }
}
