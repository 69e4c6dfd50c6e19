package dev.redlock.it;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.LockEvent;
import dev.redlock.Redlock;
import dev.redlock.testkit.RedisFixture;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Closing a {@code Redlock} while its kept-alive leases are in use: close waits for their holders
 * (the contract's {@code close…} cases), and that wait stays bounded; on three real nodes.
 */
class CloseIT extends RealNodesTest {
  static final Duration TTL = Duration.ofSeconds(2);

  CloseIT() {
    super(RedisFixture.nodes(3));
  }

  @Override
  public Duration nodeTimeout() {
    return Duration.ofMillis(100);
  }

  /** Called by a withLock task, close gives that task's own lease back at once: no loss. */
  @Test
  void closeCalledByATaskGivesItsOwnLeaseBackWithoutALoss() throws Exception {
    Redlock a = client();
    AtomicReference<LeaseLostException> lost = new AtomicReference<>();
    boolean interrupted =
        a.withLock(
            resource(),
            TTL,
            Duration.ZERO,
            lease -> {
              lease.onLost(lost::set);
              a.close();
              return Thread.interrupted();
            });
    assertFalse(interrupted, "the task was interrupted by a loss its own close caused");
    assertNull(lost.get(), "a lease close gave back was reported lost");
    assertTrue(client().tryAcquire(resource(), TTL).isPresent(), "given back");
  }

  /** Once closed, an extend is refused: close never waits past the validity it found. */
  @Test
  void anExtendAfterCloseIsRefused() throws Exception {
    Redlock a = client();
    Lease lease = a.tryAcquire(resource(), TTL).orElseThrow().keepAlive();
    Thread closing = new Thread(a::close, "closing");
    closing.start();
    await().atMost(NO_HANG).until(() -> a.toString().contains("closed"));
    assertFalse(lease.extend(TTL), "extended after close");
    lease.release();
    closing.join(NO_HANG.toMillis());
    assertFalse(closing.isAlive(), "close() returned once the lease was released");
  }

  /** A give-back that a RELEASED listener blocks holds close up for a bounded time only. */
  @Test
  void aGiveBackHeldUpByAListenerHoldsCloseUpForABoundedTime() throws Exception {
    CountDownLatch unblock = new CountDownLatch(1);
    Redlock a =
        client(
            config()
                .listener(
                    event -> {
                      if (event.kind() == LockEvent.Kind.RELEASED
                          && Thread.currentThread().getName().equals("holder")) {
                        try {
                          unblock.await(2 * NO_HANG.toMillis(), TimeUnit.MILLISECONDS);
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                      }
                    })
                .build());
    Lease lease = a.tryAcquire(resource(), TTL).orElseThrow().keepAlive();
    Thread closing = new Thread(a::close, "closing");
    closing.start();
    await().atMost(NO_HANG).until(() -> a.toString().contains("closed"));
    Thread holder = new Thread(lease::release, "holder");
    holder.start();
    try {
      closing.join(NO_HANG.toMillis());
      assertFalse(closing.isAlive(), "close() waited on a give-back the listener held up");
    } finally {
      unblock.countDown();
      holder.join(NO_HANG.toMillis());
    }
  }
}
