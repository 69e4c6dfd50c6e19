package dev.redlock.spring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Redlock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

/**
 * Bad configuration fails the context's start, with a message that names the property (or the
 * method and attribute) and the rule: the core's message for every core setting. No node is ever
 * reached: the nodes named here do not exist.
 */
class StartupFailureTest {
  static final String NOWHERE = "redlock.nodes=redis://127.0.0.1:1";

  static ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RedlockAutoConfiguration.class));
  }

  /** The start-up failure's messages, cause by cause. */
  static String failure(ApplicationContextRunner runner) {
    StringBuilder messages = new StringBuilder();
    runner.run(
        context -> {
          Throwable failure = context.getStartupFailure();
          assertNotNull(failure, "the context started");
          for (Throwable t = failure; t != null; t = t.getCause()) {
            messages.append(t.getMessage()).append('\n');
          }
        });
    return messages.toString();
  }

  static void assertMentions(String failure, String... parts) {
    for (String part : parts) {
      assertTrue(failure.contains(part), "should mention '" + part + "':\n" + failure);
    }
  }

  @Test
  void missingNodesNameTheProperty() {
    assertMentions(
        failure(runner().withBean(Jobs.class)),
        "redlock.nodes is required: comma-separated redis:// URIs");
  }

  @Test
  void aMalformedCoreSettingFailsWithTheCoresMessage() {
    assertMentions(
        failure(runner().withPropertyValues(NOWHERE, "redlock.node-timeout=fast")),
        "redlock.nodeTimeout must be a duration like 50ms, 2s, 1m or PT0.05S, was 'fast'");
    assertMentions(
        failure(runner().withPropertyValues(NOWHERE, "redlock.quorum=2")),
        "quorum must be >= 1 (a majority of 1 nodes) and <= 1, was 2");
    assertMentions(
        failure(runner().withPropertyValues(NOWHERE, "redlock.nodes=http://127.0.0.1:1")),
        "http://127.0.0.1:1");
  }

  @Test
  void anUnknownKeyUnderRedlockIsAnError() {
    assertMentions(
        failure(runner().withPropertyValues(NOWHERE, "redlock.node-timeuot=50ms")),
        "redlock.node-timeuot");
  }

  /** A bean with a ttl that is not a duration. */
  public static class BadTtl {
    @Locked(resource = "x", ttl = "30x")
    public void run() {}
  }

  /** A bean whose resource expression does not parse. */
  public static class BadResource {
    @Locked(resource = "x:#{#date", ttl = "30s")
    public void run() {}
  }

  /** A bean whose locked method no proxy can reach. */
  public static class FinalMethod {
    @Locked(resource = "x", ttl = "30s")
    public final void run() {}
  }

  /** A bean that skips a method that must return a number. */
  public static class SkipsAPrimitive {
    @Locked(resource = "x", ttl = "30s", whenNotAcquired = Locked.NotAcquired.SKIP)
    public int run() {
      return 1;
    }
  }

  @Test
  void aMalformedAnnotationNamesTheMethodTheAttributeAndTheRule() {
    assertMentions(
        failure(runner().withPropertyValues(NOWHERE).withBean(BadTtl.class)),
        "@Locked(ttl = \"30x\") on BadTtl.run(): ttl must be a duration like 50ms, 2s, 1m or"
            + " PT0.05S, was '30x'");
    assertMentions(
        failure(runner().withPropertyValues(NOWHERE).withBean(BadResource.class)),
        "@Locked(resource = \"x:#{#date\") on BadResource.run() is not a valid expression");
    assertMentions(
        failure(runner().withPropertyValues(NOWHERE).withBean(FinalMethod.class)),
        "@Locked on FinalMethod.run() cannot take effect: the method is final");
    assertMentions(
        failure(runner().withPropertyValues(NOWHERE).withBean(SkipsAPrimitive.class)),
        "@Locked on SkipsAPrimitive.run() skips when the lock is not acquired, but returns int");
  }

  /** A bean whose ttl is above the default maxTtl (1 minute): every call would be refused. */
  public static class TtlAboveMaxTtl {
    @Locked(resource = "x", ttl = "2m")
    public void run() {}
  }

  @Test
  void aTtlAboveMaxTtlFailsTheStartRatherThanEveryCall() {
    assertMentions(
        failure(runner().withPropertyValues(NOWHERE).withBean(TtlAboveMaxTtl.class)),
        "@Locked(ttl) on TtlAboveMaxTtl.run() must be <= maxTtl (PT1M), was PT2M");
    runner()
        .withPropertyValues(NOWHERE, "redlock.max-ttl=5m")
        .withBean(TtlAboveMaxTtl.class)
        .run(context -> assertNull(context.getStartupFailure(), "2m fits in a maxTtl of 5m"));
  }

  /** A lazy bean is made after the start-up check: its own creation fails instead. */
  @Test
  void aLazyBeansTtlAboveMaxTtlFailsItsCreation() {
    runner()
        .withPropertyValues(NOWHERE)
        .withBean(TtlAboveMaxTtl.class, TtlAboveMaxTtl::new, bean -> bean.setLazyInit(true))
        .run(
            context -> {
              assertNull(context.getStartupFailure(), "nothing made it yet");
              BeanCreationException e =
                  assertThrows(
                      BeanCreationException.class, () -> context.getBean(TtlAboveMaxTtl.class));
              assertTrue(
                  e.getMessage()
                      .contains(
                          "@Locked(ttl) on TtlAboveMaxTtl.run() must be <= maxTtl (PT1M), was"
                              + " PT2M"),
                  e.getMessage());
            });
  }

  /** An application as Boot starts one, for its start-up report. */
  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(RedlockAutoConfiguration.class)
  static class App {}

  /**
   * A real start (SpringApplication, its failure analyzers): a bad setting is Boot's "APPLICATION
   * FAILED TO START" report with the core's message and what to do, not a stack of bean failures.
   */
  @Test
  @ExtendWith(OutputCaptureExtension.class)
  void aBadSettingIsBootsStartUpReport(CapturedOutput output) {
    assertThrows(
        RuntimeException.class,
        () ->
            new SpringApplicationBuilder(App.class)
                .web(WebApplicationType.NONE)
                .properties(NOWHERE, "redlock.node-timeout=fast")
                .run()
                .close());
    assertMentions(
        output.toString(),
        "APPLICATION FAILED TO START",
        "Description:",
        "redlock.nodeTimeout must be a duration like 50ms, 2s, 1m or PT0.05S, was 'fast'",
        "Action:",
        RedlockSettingsException.FIX_PROPERTY);
  }

  @Test
  void aJedisOlderThanSevenIsRefusedWithWhatToSet() {
    assertEquals("7.0.0", JedisVersion.onClassPath(), "the Jedis these tests run on");
    JedisVersion.check("7.0.0");
    JedisVersion.check(null); // a jar that does not say: not refused
    RedlockSettingsException e =
        assertThrows(RedlockSettingsException.class, () -> JedisVersion.check("6.0.0"));
    assertMentions(
        e.getMessage() + "\n" + e.action(),
        "Jedis 6.0.0 is on the class path, but Redlock needs Jedis 7",
        "<jedis.version>7.0.0</jedis.version>");
  }

  @Test
  void aLockedMethodWithoutARedlockSaysHowToGetOne() {
    assertMentions(
        failure(runner().withPropertyValues("redlock.enabled=false").withBean(Jobs.class)),
        "@Locked methods need a Redlock bean");
  }

  @Test
  void turnedOffThereIsNoRedlock() {
    runner()
        .withPropertyValues("redlock.enabled=false")
        .run(context -> assertTrue(context.getBeanNamesForType(Redlock.class).length == 0));
  }

  /**
   * Without a DataSource, or (in redlock-spring-boot3-tests, whose class path lacks it) without
   * redlock-jdbc: each says what is missing.
   */
  @Test
  void theJdbcStoreWithoutADataSourceOrWithoutRedlockJdbcSaysSo() {
    boolean hasRedlockJdbc =
        org.springframework.util.ClassUtils.isPresent("dev.redlock.jdbc.JdbcLeases", null);
    assertMentions(
        failure(runner().withPropertyValues("redlock.store=jdbc")),
        hasRedlockJdbc
            ? "redlock.store=jdbc needs one DataSource bean"
            : "redlock.store=jdbc needs dev.redlock:redlock-jdbc on the class path");
    if (!hasRedlockJdbc) {
      return;
    }
    assertMentions(
        failure(runner().withPropertyValues("redlock.store=jdbc", NOWHERE)),
        "redlock.nodes is a setting of the Redis store only");
  }
}
