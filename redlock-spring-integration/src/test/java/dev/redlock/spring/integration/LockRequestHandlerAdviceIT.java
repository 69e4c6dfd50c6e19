package dev.redlock.spring.integration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.spring.integration.Apps.Instance;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.Timing;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.config.EnableIntegration;
import org.springframework.integration.dsl.IntegrationFlow;
import org.springframework.integration.handler.advice.LockRequestHandlerAdvice;
import org.springframework.integration.support.MessageBuilder;
import org.springframework.messaging.MessageChannel;
import org.springframework.messaging.MessageHeaders;
import org.springframework.scheduling.concurrent.ThreadPoolTaskExecutor;

/**
 * {@link LockRequestHandlerAdvice} on the registry, in two applications over three real nodes, each
 * handling the same channel's messages on four threads: messages with one key are handled one at a
 * time across both applications, messages with different keys at once.
 */
class LockRequestHandlerAdviceIT {
  @RegisterExtension static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));

  static final Timing timing = Timing.get();
  static final String KEY_HEADER = "account";

  /** What the handler of both applications does with a message's headers; set by each test. */
  static volatile Consumer<MessageHeaders> handling = headers -> {};

  /** A flow as an application writes one: handlers on an executor, serialised per account. */
  @Configuration(proxyBeanMethods = false)
  @EnableIntegration
  static class Settlements {
    @Bean
    ThreadPoolTaskExecutor handlers() {
      ThreadPoolTaskExecutor executor = new ThreadPoolTaskExecutor();
      executor.setCorePoolSize(4);
      executor.setMaxPoolSize(4);
      return executor;
    }

    @Bean
    IntegrationFlow settle(RedlockLockRegistry lockRegistry, ThreadPoolTaskExecutor handlers) {
      return IntegrationFlow.from("settlements")
          .channel(c -> c.executor(handlers))
          .handle(
              Object.class,
              (payload, headers) -> {
                handling.accept(headers);
                return null;
              },
              e ->
                  e.advice(
                      new LockRequestHandlerAdvice(
                          lockRegistry, message -> message.getHeaders().get(KEY_HEADER))))
          .get();
    }
  }

  private ConfigurableApplicationContext appA;
  private ConfigurableApplicationContext appB;

  @BeforeEach
  void twoApplications() {
    Duration ttl = Duration.ofSeconds(5);
    appA = Apps.start(new Instance("a", redis.uris(), ttl), Settlements.class);
    appB = Apps.start(new Instance("b", redis.uris(), ttl), Settlements.class);
  }

  @AfterEach
  void closeThem() {
    appB.close();
    appA.close();
    handling = headers -> {};
  }

  void send(ConfigurableApplicationContext app, int payload, String key) {
    app.getBean("settlements", MessageChannel.class)
        .send(MessageBuilder.withPayload(payload).setHeader(KEY_HEADER, key).build());
  }

  @Test
  void messagesWithOneKeyAreNeverHandledAtOnceAcrossTwoApplications() throws Exception {
    Map<String, AtomicInteger> inside = new ConcurrentHashMap<>();
    Map<String, AtomicInteger> mostInside = new ConcurrentHashMap<>();
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    CountDownLatch handled = new CountDownLatch(40);
    handling =
        headers -> {
          String key = (String) headers.get(KEY_HEADER);
          int now = inside.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
          mostInside
              .computeIfAbsent(key, k -> new AtomicInteger())
              .accumulateAndGet(now, Math::max);
          try {
            Thread.sleep(5); // the work: long enough for another handler to come in if it could
          } catch (InterruptedException e) {
            failures.add(e);
            Thread.currentThread().interrupt();
          } finally {
            inside.get(key).decrementAndGet();
            handled.countDown();
          }
        };
    for (int i = 0; i < 20; i++) {
      String key = i % 2 == 0 ? "acct-1" : "acct-2";
      send(appA, i, key);
      send(appB, i, key);
    }
    assertTrue(handled.await(timing.noHang().toMillis(), TimeUnit.MILLISECONDS), "all handled");
    assertEquals(List.of(), failures);
    assertEquals(1, mostInside.get("acct-1").get(), "acct-1 handlers at once");
    assertEquals(1, mostInside.get("acct-2").get(), "acct-2 handlers at once");
  }

  @Test
  void messagesWithDifferentKeysAreHandledAtOnce() throws Exception {
    // Four handlers meet at a barrier: they pass only if all four run at the same time.
    CyclicBarrier allAtOnce = new CyclicBarrier(4);
    List<Throwable> failures = new CopyOnWriteArrayList<>();
    CountDownLatch handled = new CountDownLatch(4);
    handling =
        headers -> {
          try {
            allAtOnce.await(timing.noHang().toMillis(), TimeUnit.MILLISECONDS);
          } catch (Exception e) {
            failures.add(e);
          } finally {
            handled.countDown();
          }
        };
    send(appA, 1, "acct-1");
    send(appA, 2, "acct-2");
    send(appB, 3, "acct-3");
    send(appB, 4, "acct-4");
    assertTrue(handled.await(timing.noHang().toMillis(), TimeUnit.MILLISECONDS), "all handled");
    assertEquals(List.of(), failures, "four keys, four handlers at once");
  }
}
