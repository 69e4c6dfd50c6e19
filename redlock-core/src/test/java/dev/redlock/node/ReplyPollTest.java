package dev.redlock.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.args.ClientPauseMode;

/**
 * A ballot looks at every node's reply before it waits on one ({@link Exchange#ready}). A look that
 * finds no reply yet must leave the reading to the caller: a drain queued then would read the reply
 * on an I/O thread and cost every round a thread hand-off (in a contended loop, about five more
 * futex calls and two context switches per critical section). The node holds scripts with {@code
 * CLIENT PAUSE ... WRITE} until {@code CLIENT UNPAUSE} (Redis 6.2+), so the reply cannot have come
 * when the caller looks.
 */
class ReplyPollTest {
  @Test
  void aLookBeforeTheReplyCameLeavesItsReadToTheCaller() throws Exception {
    LocalRedisServer redis = LocalRedisServer.start(false);
    ExecutorService io = Executors.newCachedThreadPool();
    AtomicInteger drains = new AtomicInteger();
    Executor counted =
        task -> {
          drains.incrementAndGet();
          io.execute(task);
        };
    NodeRequest extend = new NodeRequest(NodeRequest.Verb.EXTEND, "redlock:none", "t", 30_000);
    LockNode node =
        LockNode.connect(
            NodeUri.parse("redis://127.0.0.1:" + redis.port),
            Duration.ofSeconds(10),
            Duration.ofSeconds(2),
            1,
            NodeKeys.of("redlock:", 60_000, true),
            null,
            counted);
    try (Jedis admin = new Jedis("127.0.0.1", redis.port)) {
      node.open();
      long free = node.begin(extend).finish(TimeUnit.SECONDS.toNanos(2)); // the script is loaded
      int before = drains.get();
      admin.clientPause(60_000, ClientPauseMode.WRITE); // scripts wait until the unpause
      Exchange exchange = node.begin(extend);
      assertFalse(exchange.ready(), "the node is paused: no reply can have come");
      assertFalse(exchange.readIfArrived(), "the node is paused: no reply can have come");
      assertEquals(before, drains.get(), "a look that found no reply queued a drain");
      admin.clientUnpause();
      assertEquals(free, exchange.finish(TimeUnit.SECONDS.toNanos(5)));
      assertEquals(before, drains.get(), "the caller's own reply was read by a drain");
    } finally {
      node.close();
      io.shutdownNow();
      redis.close();
    }
  }
}
