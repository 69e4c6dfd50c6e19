package dev.redlock.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.spi.LeaseStore;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RedlockConfigTest {
  private static final List<String> THREE =
      List.of("redis://127.0.0.1:7001", "redis://127.0.0.1:7002", "redis://127.0.0.1:7003");

  /**
   * A store other than Redis, as {@link RedlockConfig.Builder#store} takes one: never made here.
   */
  private static final Function<Duration, LeaseStore<?>> STORE =
      new Function<>() {
        @Override
        public LeaseStore<?> apply(Duration timeout) {
          throw new UnsupportedOperationException("a config test makes no store");
        }

        @Override
        public String toString() {
          return "memory store";
        }
      };

  private static void rejects(
      Class<? extends Throwable> type, String messagePart, Executable call) {
    Throwable e = assertThrows(type, call);
    assertTrue(
        e.getMessage() != null && e.getMessage().contains(messagePart),
        "message should contain '" + messagePart + "': " + e.getMessage());
  }

  @Test
  void defaultsAreTheDocumentedOnes() {
    RedlockConfig config = RedlockConfig.builder().nodes(THREE).build();
    assertEquals(2, config.quorum());
    assertEquals("redlock:", config.keyPrefix());
    assertEquals(0.01, config.clockDriftFactor());
    assertEquals(Duration.ofMillis(50), config.nodeTimeout());
    assertEquals(Duration.ofMillis(200), config.retryDelay());
    assertEquals(Duration.ofMillis(100), config.retryJitter());
    assertEquals(
        Math.min(64, 8 * Runtime.getRuntime().availableProcessors()), config.maxAttemptsInFlight());
    assertEquals(4, config.maxConnectionsPerNode());
    assertEquals(THREE, config.nodes());
  }

  @Test
  void attemptsInFlightDefaultToEightPerProcessorAndAtMostSixtyFour() {
    assertEquals(8, ConfigValues.defaultMaxAttemptsInFlight(1));
    assertEquals(16, ConfigValues.defaultMaxAttemptsInFlight(2));
    assertEquals(56, ConfigValues.defaultMaxAttemptsInFlight(7));
    assertEquals(64, ConfigValues.defaultMaxAttemptsInFlight(8));
    assertEquals(64, ConfigValues.defaultMaxAttemptsInFlight(96));
    assertEquals(8, ConfigValues.defaultMaxAttemptsInFlight(0), "never below one processor's");
    assertEquals(
        ConfigValues.defaultMaxAttemptsInFlight(Runtime.getRuntime().availableProcessors()),
        ConfigValues.defaultMaxAttemptsInFlight());
  }

  @Test
  void defaultQuorumIsAMajority() {
    assertEquals(1, RedlockConfig.builder().node("redis://h:1").build().quorum());
    assertEquals(
        2, RedlockConfig.builder().node("redis://h:1").node("redis://h:2").build().quorum());
    assertEquals(
        3,
        RedlockConfig.builder()
            .nodes(
                List.of("redis://h:1", "redis://h:2", "redis://h:3", "redis://h:4", "redis://h:5"))
            .build()
            .quorum());
  }

  @Test
  void quorumMayBeRaisedToNButNeverBelowAMajority() {
    assertEquals(3, RedlockConfig.builder().nodes(THREE).quorum(3).build().quorum());
    rejects(
        IllegalArgumentException.class,
        "quorum must be >= 2 (a majority of 3 nodes) and <= 3, was 1",
        () -> RedlockConfig.builder().nodes(THREE).quorum(1).build());
    rejects(
        IllegalArgumentException.class,
        "was 4",
        () -> RedlockConfig.builder().nodes(THREE).quorum(4).build());
    rejects(
        IllegalArgumentException.class,
        "quorum must be >= 1, was 0",
        () -> RedlockConfig.builder().quorum(0));
  }

  @Test
  void nodesAreRequiredAndDistinct() {
    rejects(
        IllegalArgumentException.class,
        "nodes must not be empty",
        () -> RedlockConfig.builder().build());
    rejects(
        IllegalArgumentException.class,
        "redis://127.0.0.1:7001/2 is listed twice",
        () ->
            RedlockConfig.builder()
                .node("redis://127.0.0.1:7001")
                .node("redis://:pw@127.0.0.1:7001/2")
                .build());
    rejects(
        NullPointerException.class,
        "node must not be null",
        () -> RedlockConfig.builder().node(null));
    rejects(
        NullPointerException.class,
        "nodes must not be null",
        () -> RedlockConfig.builder().nodes(null));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "http://h:1",
        "127.0.0.1:6379",
        "redis://",
        "redis://h:99999",
        "redis://h:1/x",
        "redis://h:1?db=2",
        "redis ://h"
      })
  void malformedNodeUrisAreRejected(String uri) {
    rejects(
        IllegalArgumentException.class,
        "node must be a URI like redis://",
        () -> RedlockConfig.builder().node(uri));
  }

  @Test
  void aRejectedUriNeverEchoesItsPassword() {
    Throwable e =
        assertThrows(
            IllegalArgumentException.class,
            () -> RedlockConfig.builder().node("redis://user:s3cret@h:1/x"));
    assertFalse(e.getMessage().contains("s3cret"), e.getMessage());
  }

  @Test
  void credentialsNeverAppearInNodesOrToString() {
    RedlockConfig config =
        RedlockConfig.builder()
            .node("redis://user:s3cret@h:1")
            .node("rediss://:pw@h:2/3")
            .node("redis://h")
            .build();
    assertEquals(List.of("redis://h:1", "rediss://h:2/3", "redis://h:6379"), config.nodes());
    assertFalse(config.toString().contains("s3cret"));
  }

  @Test
  void eachSetterNamesItsRule() {
    RedlockConfig.Builder b = RedlockConfig.builder();
    rejects(
        IllegalArgumentException.class,
        "clockDriftFactor must be >= 0 and < 0.5, was -0.1",
        () -> b.clockDriftFactor(-0.1));
    rejects(
        IllegalArgumentException.class, "clockDriftFactor", () -> b.clockDriftFactor(Double.NaN));
    rejects(IllegalArgumentException.class, "clockDriftFactor", () -> b.clockDriftFactor(0.5));
    rejects(
        IllegalArgumentException.class,
        "nodeTimeout must be >= 1ms and <= 1m, was PT0S",
        () -> b.nodeTimeout(Duration.ZERO));
    rejects(
        IllegalArgumentException.class, "nodeTimeout", () -> b.nodeTimeout(Duration.ofMinutes(2)));
    rejects(NullPointerException.class, "nodeTimeout must not be null", () -> b.nodeTimeout(null));
    rejects(
        IllegalArgumentException.class,
        "retryDelay must be >= 1ms, was PT0S",
        () -> b.retryDelay(Duration.ZERO));
    rejects(NullPointerException.class, "retryDelay", () -> b.retryDelay(null));
    rejects(
        IllegalArgumentException.class,
        "retryJitter must be >= 0, was PT-0.001S",
        () -> b.retryJitter(Duration.ofMillis(-1)));
    rejects(NullPointerException.class, "retryJitter", () -> b.retryJitter(null));
    rejects(
        IllegalArgumentException.class,
        "maxAttemptsInFlight must be >= 1 and <= 65536, was 0",
        () -> b.maxAttemptsInFlight(0));
    rejects(
        IllegalArgumentException.class,
        "maxAttemptsInFlight must be >= 1 and <= 65536, was 65537",
        () -> b.maxAttemptsInFlight(65_537));
    rejects(
        IllegalArgumentException.class,
        "maxConnectionsPerNode must be >= 1 and <= 64, was 0",
        () -> b.maxConnectionsPerNode(0));
    rejects(NullPointerException.class, "keyPrefix must not be null", () -> b.keyPrefix(null));
    rejects(
        IllegalArgumentException.class,
        "keyPrefix must not contain '@' (it marks the nodes' own keys), was 'a@b:'",
        () -> b.keyPrefix("a@b:"));
  }

  @Test
  void readsProperties() {
    Properties p = new Properties();
    p.setProperty("redlock.nodes", " redis://h:1, redis://h:2 ,redis://h:3");
    p.setProperty("redlock.quorum", "3");
    p.setProperty("redlock.keyPrefix", "locks/");
    p.setProperty("redlock.clockDriftFactor", "0.02");
    p.setProperty("redlock.nodeTimeout", "75ms");
    p.setProperty("redlock.retryDelay", "PT0.5S");
    p.setProperty("redlock.retryJitter", "1s");
    p.setProperty("redlock.maxAttemptsInFlight", "16");
    p.setProperty("redlock.maxConnectionsPerNode", "8");
    p.setProperty("redlock.restartGuard", " trust_fsynced_aof_restarts ");
    p.setProperty("other.key", "ignored");
    RedlockConfig config = RedlockConfig.fromProperties(p);
    assertEquals(RestartGuard.TRUST_FSYNCED_AOF_RESTARTS, config.restartGuard());
    assertEquals(List.of("redis://h:1", "redis://h:2", "redis://h:3"), config.nodes());
    assertEquals(3, config.quorum());
    assertEquals("locks/", config.keyPrefix());
    assertEquals(0.02, config.clockDriftFactor());
    assertEquals(Duration.ofMillis(75), config.nodeTimeout());
    assertEquals(Duration.ofMillis(500), config.retryDelay());
    assertEquals(Duration.ofSeconds(1), config.retryJitter());
    assertEquals(16, config.maxAttemptsInFlight());
    assertEquals(8, config.maxConnectionsPerNode());
  }

  /** Issue 13, item 5: settings under which every ttl would be rejected fail when built. */
  @Test
  void settingsThatLeaveNoValidTtlAreRejectedWhenBuilt() {
    rejects(
        IllegalArgumentException.class,
        "maxTtl leaves no valid ttl: a ttl must be > nodeTimeout + clock drift (50ms + 2ms) and <="
            + " maxTtl, was PT0.051S; raise maxTtl or lower nodeTimeout",
        () ->
            RedlockConfig.builder()
                .store(STORE)
                .nodeTimeout(Duration.ofMillis(50))
                .maxTtl(Duration.ofMillis(51))
                .build());
    rejects(
        IllegalArgumentException.class,
        "maxTtl leaves no valid ttl: a ttl must be > nodeTimeout",
        () ->
            RedlockConfig.builder()
                .node("redis://h:1")
                .nodeTimeout(Duration.ofMillis(100))
                .maxTtl(Duration.ofMillis(100))
                .build());
    RedlockConfig.builder()
        .store(STORE)
        .nodeTimeout(Duration.ofMillis(50))
        .maxTtl(Duration.ofMillis(53))
        .build();
  }

  @Test
  void theRestartGuardIsOnUnlessAskedAndABadValueNamesTheKeyAndTheChoices() {
    Properties p = new Properties();
    p.setProperty("redlock.nodes", "redis://h:1");
    assertEquals(RestartGuard.ON, RedlockConfig.fromProperties(p).restartGuard());
    p.setProperty("redlock.restartGuard", "yes");
    rejects(
        IllegalArgumentException.class,
        "redlock.restartGuard must be one of [ON, TRUST_FSYNCED_AOF_RESTARTS, OFF], was 'yes'",
        () -> RedlockConfig.fromProperties(p));
    rejects(
        NullPointerException.class,
        "restartGuard must not be null",
        () -> RedlockConfig.builder().restartGuard(null));
  }

  @Test
  void badPropertiesNameTheKey() {
    Properties p = new Properties();
    rejects(
        IllegalArgumentException.class,
        "redlock.nodes is required",
        () -> RedlockConfig.fromProperties(p));
    p.setProperty("redlock.nodes", "redis://h:1");
    p.setProperty("redlock.nodeTimeuot", "50ms");
    rejects(
        IllegalArgumentException.class,
        "unknown property redlock.nodeTimeuot",
        () -> RedlockConfig.fromProperties(p));
    p.remove("redlock.nodeTimeuot");
    p.setProperty("redlock.nodeTimeout", "fast");
    rejects(
        IllegalArgumentException.class,
        "redlock.nodeTimeout must be a duration like 50ms, 2s, 1m or PT0.05S, was 'fast'",
        () -> RedlockConfig.fromProperties(p));
    p.remove("redlock.nodeTimeout");
    p.setProperty("redlock.quorum", "two");
    rejects(
        IllegalArgumentException.class,
        "redlock.quorum must be an integer, was 'two'",
        () -> RedlockConfig.fromProperties(p));
    rejects(NullPointerException.class, "properties", () -> RedlockConfig.fromProperties(null));
  }

  @Test
  void propertyKeysAreEveryKeyReadAndTheSharedOnesASubsetInTheSameOrder() {
    assertEquals(ConfigProperties.keys(), RedlockConfig.propertyKeys());
    List<String> shared = ConfigProperties.sharedKeys();
    assertEquals(
        List.of(
            "redlock.clockDriftFactor",
            "redlock.nodeTimeout",
            "redlock.retryDelay",
            "redlock.retryJitter",
            "redlock.maxAttemptsInFlight",
            "redlock.renewalFraction",
            "redlock.maxHold",
            "redlock.taskInterruption",
            "redlock.maxTtl",
            "redlock.auditLog"),
        shared);
    assertEquals(shared, RedlockConfig.propertyKeys().stream().filter(shared::contains).toList());
  }

  @Test
  void aStoreReadsTheSharedKeysWithTheSameRulesAndRefusesRedisOnes() {
    Properties p = new Properties();
    p.setProperty("redlock.clockDriftFactor", "0.02");
    p.setProperty("redlock.retryDelay", "PT0.5S");
    p.setProperty("redlock.retryJitter", "1s");
    p.setProperty("redlock.renewalFraction", "0.25");
    p.setProperty("redlock.maxHold", "2h");
    p.setProperty("redlock.taskInterruption", "never");
    p.setProperty("redlock.maxTtl", "5m");
    p.setProperty("redlock.auditLog", "true");
    p.setProperty("other.key", "ignored");
    RedlockConfig settings =
        RedlockConfig.builder()
            .store(STORE)
            .nodeTimeout(Duration.ofSeconds(2))
            .properties(p)
            .build();
    assertEquals(Duration.ofSeconds(2), settings.nodeTimeout());
    assertEquals(0.02, settings.clockDriftFactor());
    assertEquals(Duration.ofMillis(500), settings.retryDelay());
    assertEquals(Duration.ofSeconds(1), settings.retryJitter());
    assertEquals(0.25, settings.renewalFraction());
    assertEquals(Duration.ofHours(2), settings.maxHold());
    assertEquals(TaskInterruption.NEVER, settings.taskInterruption());
    assertEquals(Duration.ofMinutes(5), settings.maxTtl());
    assertEquals(1, settings.listeners().size());

    Properties bad = new Properties();
    bad.setProperty("redlock.maxHold", "long");
    rejects(
        IllegalArgumentException.class,
        "redlock.maxHold must be a duration like 50ms, 2s, 1m or PT0.05S, was 'long'",
        () -> RedlockConfig.builder().store(STORE).properties(bad));
    bad.setProperty("redlock.maxHold", "0s");
    rejects(
        IllegalArgumentException.class,
        "maxHold must be > 0, was PT0S",
        () -> RedlockConfig.builder().store(STORE).properties(bad));
    bad.clear();
    bad.setProperty("redlock.nodes", "redis://h:1");
    rejects(
        IllegalArgumentException.class,
        "redlock.nodes is a setting of the Redis store only: it does not apply with a store",
        () -> RedlockConfig.builder().store(STORE).properties(bad));
    bad.clear();
    bad.setProperty("redlock.maxHodl", "1h");
    rejects(
        IllegalArgumentException.class,
        "unknown property redlock.maxHodl",
        () -> RedlockConfig.builder().store(STORE).properties(bad));
    bad.clear();
    bad.setProperty("redlock.quorum", "1");
    rejects(
        IllegalArgumentException.class,
        "redlock.quorum is a setting of the Redis store only",
        () -> RedlockConfig.builder().store(STORE).properties(bad));
    rejects(
        NullPointerException.class,
        "properties",
        () -> RedlockConfig.builder().store(STORE).properties(null));
    bad.clear();
    bad.setProperty("redlock.nodeTimeout", "3s");
    assertEquals(
        Duration.ofSeconds(3),
        RedlockConfig.builder().store(STORE).properties(bad).build().nodeTimeout(),
        "the node timeout is the store's too");
  }

  @Test
  void aConfigHasEitherNodesOrAStore() {
    rejects(
        IllegalArgumentException.class,
        "nodes must not be empty: add at least one node (3 or 5 for fault tolerance), or set a"
            + " store",
        () -> RedlockConfig.builder().build());
    rejects(
        IllegalArgumentException.class,
        "nodes and store are both set: the leases are kept either on Redis nodes or in a store,"
            + " not both; remove the nodes [redis://h:1] or the store memory store",
        () -> RedlockConfig.builder().node("redis://h:1").store(STORE).build());
    rejects(
        NullPointerException.class,
        "store must not be null",
        () -> RedlockConfig.builder().store(null));
    RedlockConfig config =
        RedlockConfig.builder()
            .store(STORE)
            .quorum(3)
            .keyPrefix("ignored:")
            .nodeTimeout(Duration.ofSeconds(2))
            .build();
    assertEquals(List.of(), config.nodes());
    assertEquals(List.of(), config.connectionUris());
    assertEquals(0, config.quorum(), "the store counts its own votes");
    assertEquals(Duration.ofSeconds(2), config.nodeTimeout());
    assertTrue(
        config
            .toString()
            .startsWith(
                "RedlockConfig{store=memory store, clockDriftFactor=0.01, nodeTimeout=PT2S"),
        config.toString());
    assertFalse(config.toString().contains("ignored:"), "Redis settings do not apply: " + config);
  }

  @Test
  void aBuilderReadsPropertiesOnTopOfWhatItHas() {
    Properties p = new Properties();
    p.setProperty("redlock.nodeTimeout", "75ms");
    rejects(
        IllegalArgumentException.class,
        "redlock.nodes is required",
        () -> RedlockConfig.builder().properties(p));
    RedlockConfig config =
        RedlockConfig.builder().node("redis://h:1").listener(event -> {}).properties(p).build();
    assertEquals(List.of("redis://h:1"), config.nodes());
    assertEquals(Duration.ofMillis(75), config.nodeTimeout());
    assertEquals(1, config.listeners().size());
    p.setProperty("redlock.nodes", "redis://h:2,redis://h:3");
    p.setProperty("redlock.auditLog", "true");
    RedlockConfig both = RedlockConfig.builder().listener(event -> {}).properties(p).build();
    assertEquals(List.of("redis://h:2", "redis://h:3"), both.nodes());
    assertEquals(2, both.listeners().size());
    p.setProperty("redlock.maxTtl", "48h");
    rejects(
        IllegalArgumentException.class,
        "maxTtl must be >= 1ms and <= 1d, was PT48H",
        () -> RedlockConfig.builder().properties(p));
  }
}
