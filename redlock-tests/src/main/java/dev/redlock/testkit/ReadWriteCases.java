package dev.redlock.testkit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.LockEvent;
import dev.redlock.ReadWriteLock;
import dev.redlock.Redlock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** {@link LeaseContract}'s cases: read-write locks: many readers or one writer. */
abstract class ReadWriteCases extends AsyncAndSemaphoreCases {
  // ---- read-write locks: many readers or one writer ---------------------------------------

  /**
   * The read-write lock {@code name} of {@code client}; on a store without read-write locks, checks
   * that it says so, naming the store, and skips the test.
   */
  private ReadWriteLock readWrite(Redlock client, String name) {
    try {
      return client.readWriteLock(resource(name));
    } catch (UnsupportedOperationException e) {
      assertTrue(
          e.getMessage().contains("has no read-write locks") && e.getMessage().contains("Store"),
          "a store without read-write locks says so and names itself: " + e.getMessage());
      org.junit.jupiter.api.Assumptions.abort(e.getMessage());
      throw e; // not reached
    }
  }

  @Test
  void readersShareAndAWriterWaitsForEveryOneOfThem() throws Exception {
    ReadWriteLock a = readWrite(client(), "rw-share");
    ReadWriteLock b = readWrite(client(), "rw-share");
    ReadWriteLock c = readWrite(client(), "rw-share");
    Lease readA = a.readLock().tryAcquire(LONG_TTL).orElseThrow();
    Lease readB =
        b.readLock()
            .tryAcquire(LONG_TTL)
            .orElseThrow(() -> new AssertionError("readers share the lock"));
    assertEquals(a.name(), readA.resource());
    assertTrue(c.writeLock().tryAcquire(LONG_TTL).isEmpty(), "a writer waits for the readers");
    readA.release();
    assertTrue(c.writeLock().tryAcquire(LONG_TTL).isEmpty(), "and for the last of them");
    assertTrue(readB.isValid());
    readB.release();
    Lease write =
        c.writeLock()
            .tryAcquire(LONG_TTL)
            .orElseThrow(() -> new AssertionError("free for the writer once every reader left"));
    assertTrue(
        write.fencingToken() > readA.fencingToken() && write.fencingToken() > readB.fencingToken(),
        "a writer's token is above every read it excluded: "
            + write.fencingToken()
            + " vs "
            + readA.fencingToken()
            + ", "
            + readB.fencingToken());
    assertTrue(a.readLock().tryAcquire(LONG_TTL).isEmpty(), "a writer excludes readers");
    assertTrue(b.writeLock().tryAcquire(LONG_TTL).isEmpty(), "and other writers");
    write.release();
    Lease readAfter =
        a.readLock()
            .tryAcquire(LONG_TTL)
            .orElseThrow(() -> new AssertionError("readers again once the writer left"));
    assertTrue(readAfter.fencingToken() > write.fencingToken(), "a read after a write is above it");
    readAfter.release();
  }

  /** A plain lock and a read-write lock of the same name are apart: neither refuses the other. */
  @Test
  void aPlainLockOfTheSameNameIsApartFromTheReadWriteLock() throws Exception {
    Redlock a = client();
    Redlock b = client();
    ReadWriteLock rw = readWrite(a, "rw-apart");
    try (Lease plain = b.acquire(rw.name(), LONG_TTL, NO_HANG)) {
      Lease write =
          rw.writeLock()
              .tryAcquire(LONG_TTL)
              .orElseThrow(() -> new AssertionError("the plain lock does not hold the rw lock"));
      assertTrue(b.tryAcquire(rw.name(), LONG_TTL).isEmpty(), "the plain lock is still held");
      write.release();
      assertTrue(plain.isValid());
    }
  }

  /**
   * Writer preference: while readers keep coming, each overlapping the last, a writer waiting with
   * {@code acquire} gets in; readers asking meanwhile are refused once it waits.
   */
  @Test
  void aWriterGetsInWhileReadersKeepComing() throws Exception {
    ReadWriteLock readers = readWrite(client(), "rw-prefer");
    ReadWriteLock writer =
        readWrite(
            client(
                settings ->
                    settings
                        .retryDelay(TIMING.scaled(Duration.ofMillis(20)))
                        .retryJitter(TIMING.scaled(Duration.ofMillis(10)))),
            "rw-prefer");
    Lease last = readers.readLock().tryAcquire(LONG_TTL).orElseThrow();
    CompletableFuture<Lease> write =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return writer.writeLock().acquire(LONG_TTL, NO_HANG);
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
            });
    int refusedReaders = 0;
    // Readers keep coming, each taken before the previous is released: without writer preference
    // the lock would never be free of readers.
    long until = System.nanoTime() + NO_HANG.toNanos();
    while (!write.isDone() && System.nanoTime() - until < 0) {
      Optional<Lease> next = readers.readLock().tryAcquire(LONG_TTL);
      if (next.isEmpty()) {
        refusedReaders++;
      }
      last.release();
      last = next.orElse(null);
      if (last == null) {
        break; // refused: the writer waits; the last reader is gone
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
    Lease written = write.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    assertTrue(refusedReaders >= 1, "a reader was refused while the writer waited");
    assertTrue(written.isValid());
    assertTrue(readers.readLock().tryAcquire(LONG_TTL).isEmpty(), "the writer is alone");
    written.release();
    if (last != null) {
      last.release();
    }
  }

  /** A crashed reader (never released) holds the writer off only until its lease expires. */
  @Test
  void anExpiredReaderFreesTheWriter() throws Exception {
    ReadWriteLock a = readWrite(client(), "rw-expire");
    ReadWriteLock b = readWrite(client(), "rw-expire");
    Lease read = a.readLock().tryAcquire(shortTtl()).orElseThrow();
    assertTrue(b.writeLock().tryAcquire(LONG_TTL).isEmpty());
    waitOut(read);
    Lease write =
        await("the writer gets in once the reader's lease expired")
            .atMost(NO_HANG)
            .until(() -> b.writeLock().tryAcquire(LONG_TTL), Optional::isPresent)
            .orElseThrow();
    assertTrue(write.fencingToken() > read.fencingToken(), "above the expired read's token");
    write.release();
  }

  /**
   * Release is owner-checked: a reader's release gives back its own entry only, never another
   * reader's; a released lease cannot be extended.
   */
  @Test
  void aReadersReleaseGivesBackItsOwnEntryOnly() throws Exception {
    ReadWriteLock a = readWrite(client(), "rw-owner");
    ReadWriteLock b = readWrite(client(), "rw-owner");
    Lease readA = a.readLock().tryAcquire(LONG_TTL).orElseThrow();
    Lease readB = b.readLock().tryAcquire(LONG_TTL).orElseThrow();
    readA.release();
    readA.release(); // idempotent: must not take B's entry
    assertTrue(b.writeLock().tryAcquire(LONG_TTL).isEmpty(), "B still reads");
    assertTrue(readB.extend(LONG_TTL), "B's entry is its own to extend");
    assertThrows(IllegalStateException.class, () -> readA.extend(LONG_TTL));
    readB.release();
  }

  /**
   * withLock on either side renews the lease past its ttl (held 1.25 ttl, in which it must have
   * been renewed) and releases it after.
   */
  @Test
  void withLockRenewsBothSides() throws Exception {
    ReadWriteLock a = readWrite(client(), "rw-renew");
    ReadWriteLock b = readWrite(client(), "rw-renew");
    Duration ttl = shortTtl();
    for (ReadWriteLock.Side side : List.of(a.readLock(), a.writeLock())) {
      String result =
          side.withLock(
              ttl,
              NO_HANG,
              lease -> {
                long until = System.nanoTime() + ttl.plus(ttl.dividedBy(4)).toNanos();
                while (System.nanoTime() < until) {
                  assertTrue(b.writeLock().tryAcquire(LONG_TTL).isEmpty(), "still held");
                  lease.checkValid();
                  LockSupport.parkNanos(ttl.toNanos() / 4);
                }
                return "done";
              });
      assertEquals("done", result);
    }
    b.writeLock()
        .tryAcquire(LONG_TTL)
        .orElseThrow(() -> new AssertionError("withLock released it"))
        .release();
  }

  /**
   * 3 clients × 4 threads, mostly readers, a write now and then, each waiting with {@code acquire}:
   * the history checker finds no writer overlapping anyone, tokens in order between reads and
   * writes, and readers did share.
   */
  @Test
  void readersAndWritersUnderContentionKeepWritersAlone() throws Exception {
    History history = new History();
    AtomicInteger grants = new AtomicInteger();
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger mostReadersInside = new AtomicInteger();
    int clientsCount = 3;
    int threadsPerClient = 4;
    int rounds = 6;
    Duration maxWait = TIMING.scaled(Duration.ofSeconds(60));
    onThreadsOfClients(
        clientsCount,
        threadsPerClient,
        client -> readWrite(client, "rw-contended"),
        (rw, who, first) -> {
          for (int i = 0; i < rounds; i++) {
            boolean writes = (first + i) % 4 == 0;
            ReadWriteLock.Side side = writes ? rw.writeLock() : rw.readLock();
            try (Lease lease = side.acquire(LONG_TTL, maxWait)) {
              if (writes) {
                history.granted(who, lease);
              } else {
                history.grantedRead(who, lease);
                mostReadersInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                inside.decrementAndGet();
              }
              assertTrue(lease.isValid());
              grants.incrementAndGet();
              history.released(who, lease);
            }
          }
        });
    assertEquals(List.of(), HistoryChecker.violations(history));
    assertEquals(clientsCount * threadsPerClient * rounds, grants.get());
    assertTrue(mostReadersInside.get() >= 2, "readers shared: " + mostReadersInside.get());
    readWrite(client(), "rw-contended")
        .writeLock()
        .tryAcquire(LONG_TTL)
        .orElseThrow(() -> new AssertionError("every lease was released"))
        .release();
  }

  /**
   * A read lease in withLock whose store is cut off is lost as a plain lease is: onLost runs, the
   * LOST event names the lock, the task is told (checkValid throws); once reconnected a writer gets
   * in.
   */
  @Test
  void aReadLeaseCutOffMidTaskIsLostAndTellsTheTask() throws Exception {
    List<LockEvent> events = new CopyOnWriteArrayList<>();
    ReadWriteLock a = readWrite(client(settings -> settings.listener(events::add)), "rw-lost");
    CompletableFuture<LeaseLostException> signalled = new CompletableFuture<>();
    Exception thrown =
        assertThrows(
            Exception.class,
            () ->
                a.readLock()
                    .withLock(
                        shortTtl(),
                        NO_HANG,
                        lease -> {
                          lease.onLost(signalled::complete);
                          disconnect();
                          while (true) {
                            lease.checkValid();
                            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                          }
                        }));
    assertTrue(thrown instanceof LeaseLostException, thrown.toString());
    assertFalse(Thread.currentThread().isInterrupted(), "withLock left the loss's interrupt set");
    signalled.get(NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
    await("a LOST event for the lock")
        .atMost(NO_HANG)
        .until(
            () ->
                events.stream()
                    .anyMatch(
                        e -> e.kind() == LockEvent.Kind.LOST && a.name().equals(e.resource())));
    reconnect();
    await("a writer gets in once the lost reader is gone")
        .atMost(NO_HANG)
        .until(
            () -> readWrite(client(), "rw-lost").writeLock().tryAcquire(LONG_TTL),
            Optional::isPresent)
        .orElseThrow()
        .release();
  }

  @Test
  void badReadWriteLockNamesAndTtlsAreRefusedEarlyWithTheRule() {
    Redlock a = client();
    ReadWriteLock rw = readWrite(a, "rw-bad");
    NullPointerException npe =
        assertThrows(NullPointerException.class, () -> a.readWriteLock(null));
    assertTrue(npe.getMessage().contains("name"), npe.getMessage());
    IllegalArgumentException blank =
        assertThrows(IllegalArgumentException.class, () -> a.readWriteLock(" "));
    assertTrue(blank.getMessage().contains("name must not be blank"), blank.getMessage());
    assertThrows(IllegalArgumentException.class, () -> rw.readLock().tryAcquire(Duration.ZERO));
    IllegalArgumentException wait =
        assertThrows(
            IllegalArgumentException.class,
            () -> rw.writeLock().acquire(LONG_TTL, Duration.ofSeconds(-1)));
    assertTrue(wait.getMessage().contains("maxWait"), wait.getMessage());
  }
}
