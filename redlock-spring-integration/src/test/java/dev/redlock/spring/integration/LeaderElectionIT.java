package dev.redlock.spring.integration;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LeaseLostException;
import dev.redlock.spring.integration.Apps.Instance;
import dev.redlock.testkit.FaultyNodes;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.Timing;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.AbstractCandidate;
import org.springframework.integration.leader.Context;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

/**
 * Two applications, each a Spring context with a {@link LockRegistryLeaderInitiator} on the
 * registry, over the same three real nodes, each through TCP proxies of its own: one leader at a
 * time, and when the leader's links to every node freeze, the other takes over within the lease's
 * ttl and a little more.
 *
 * <p>Two records are checked. What each candidate was told (grants and revokes, on this JVM's
 * monotonic clock) must never overlap: the initiator's heartbeat (a reentrant {@code tryLock} every
 * 100 ms, which extends the lease) fails within about 300 ms of the freeze, while the other cannot
 * win before the lease's 2 s on the nodes run out. And what each leader did: a side effect every 10
 * ms, stamped before {@code lease.checkValid()} passes, so each stamp falls inside its lease's
 * validity. A newer lease is granted only once the older one's keys expired on a quorum, after its
 * validity; so in time order the stamps' fencing tokens never go down: the leaders' leases never
 * overlapped.
 */
class LeaderElectionIT {
  @RegisterExtension
  static final RedisFixture redis = RedisFixture.perClassBehindProxies(RedisFixture.nodes(3));

  static final Timing timing = Timing.get();
  static final Duration TTL = Duration.ofSeconds(2);
  static final Duration HEARTBEAT = Duration.ofMillis(100);
  static final String ROLE = "settlement";

  /** What both applications did, in the order it happened. */
  static final List<Event> journal = new CopyOnWriteArrayList<>();

  /** A grant, a revoke or a side effect of one application; {@code at} is System.nanoTime(). */
  record Event(String app, Kind kind, long token, long at) {}

  enum Kind {
    GRANTED,
    REVOKED,
    WROTE
  }

  /** The candidate: records what it is told, and keeps the lease it was granted under. */
  static final class RecordingCandidate extends AbstractCandidate {
    private final String app;
    private final RedlockLockRegistry registry;
    private final AtomicReference<Lease> lease = new AtomicReference<>();

    RecordingCandidate(String app, RedlockLockRegistry registry) {
      super(app, ROLE);
      this.app = app;
      this.registry = registry;
    }

    @Override
    public void onGranted(Context context) {
      // The initiator's thread holds the lock here: the lease it won is readable.
      Lease granted = registry.obtain(ROLE).lease();
      lease.set(granted);
      journal.add(new Event(app, Kind.GRANTED, granted.fencingToken(), System.nanoTime()));
    }

    @Override
    public void onRevoked(Context context) {
      lease.set(null);
      journal.add(new Event(app, Kind.REVOKED, 0, System.nanoTime()));
    }

    /** The leader's work: one side effect, made only while its lease is valid. */
    void work() {
      Lease current = lease.get();
      if (current == null) {
        return;
      }
      long at = System.nanoTime(); // before the check passes: inside the validity
      try {
        current.checkValid();
      } catch (LeaseLostException | IllegalStateException lostOrReleased) {
        return;
      }
      journal.add(new Event(app, Kind.WROTE, current.fencingToken(), at));
    }
  }

  /** Leader election on the registry, as an application declares it. */
  @Configuration(proxyBeanMethods = false)
  static class Leadership {
    @Bean
    RecordingCandidate candidate(Instance instance, RedlockLockRegistry registry) {
      return new RecordingCandidate(instance.name(), registry);
    }

    @Bean
    LockRegistryLeaderInitiator leaderInitiator(
        RedlockLockRegistry registry, RecordingCandidate candidate) {
      LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, candidate);
      initiator.setHeartBeatMillis(HEARTBEAT.toMillis());
      initiator.setBusyWaitMillis(50);
      return initiator;
    }
  }

  @Test
  void oneLeaderAtATimeAndLeadershipMovesWhenTheLeadersNodesFreeze() throws Exception {
    journal.clear();
    FaultyNodes nodes = redis.faultyNodes();
    Map<String, ConfigurableApplicationContext> apps = new HashMap<>();
    ScheduledExecutorService work = Executors.newSingleThreadScheduledExecutor();
    String first;
    String second;
    long frozenAt;
    try {
      for (String app : List.of("a", "b")) {
        apps.put(app, Apps.start(new Instance(app, nodes.uris(app), TTL), Leadership.class));
      }
      work.scheduleWithFixedDelay(
          () -> apps.values().forEach(c -> c.getBean(RecordingCandidate.class).work()),
          0,
          10,
          TimeUnit.MILLISECONDS);

      await("a leader at work").atMost(timing.noHang()).until(() -> writes(leader(apps)) >= 20);
      first = leader(apps);
      second = first.equals("a") ? "b" : "a";
      assertFalse(isLeader(apps.get(second)), "one leader");

      frozenAt = System.nanoTime();
      nodes.partition(Set.of(first), Set.of(0, 1, 2)); // its links to every node freeze
      await("the other leads")
          .atMost(timing.noHang())
          .until(() -> isLeader(apps.get(second)) && writes(second) >= 20);
      assertFalse(isLeader(apps.get(first)));

      nodes.restoreLinks();
      int before = writes(second);
      await("the new leader keeps leading with the old one back")
          .atMost(timing.noHang())
          .until(() -> writes(second) >= before + 30);
      assertTrue(isLeader(apps.get(second)));
      assertFalse(isLeader(apps.get(first)), "the old leader stays a follower");
    } finally {
      work.shutdownNow();
      assertTrue(work.awaitTermination(timing.noHang().toMillis(), TimeUnit.MILLISECONDS));
      // The follower first: no hand-over while closing.
      apps.entrySet().stream()
          .sorted(Comparator.comparing(e -> isLeader(e.getValue())))
          .forEach(e -> e.getValue().close());
    }
    // Closing stops the initiator, whose thread revokes the last grant on its way out.
    await("every grant revoked")
        .atMost(timing.noHang())
        .until(() -> count(Kind.GRANTED) == count(Kind.REVOKED));
    List<Event> events = List.copyOf(journal);

    List<long[]> firstTerms = terms(events, first);
    List<long[]> secondTerms = terms(events, second);
    assertFalse(firstTerms.isEmpty() || secondTerms.isEmpty(), "both led: " + events);
    for (long[] x : firstTerms) {
      for (long[] y : secondTerms) {
        assertTrue(x[1] < y[0] || y[1] < x[0], "two leaders at once: " + describe(events));
      }
    }
    long took =
        secondTerms.stream().mapToLong(t -> t[0]).filter(t -> t > frozenAt).min().orElseThrow()
            - frozenAt;
    assertTrue(
        took < TTL.plus(timing.scaled(Duration.ofSeconds(3))).toNanos(),
        "leadership moved " + Duration.ofNanos(took) + " after the freeze");

    long token = 0;
    String owner = null;
    for (Event e : events) {
      if (e.kind() == Kind.GRANTED) {
        assertTrue(e.token() >= token, "grants' tokens grow: " + describe(events));
        assertTrue(e.token() > token || e.app().equals(owner), "a token is one lease's");
        token = e.token();
        owner = e.app();
      }
    }
    List<Event> writes =
        events.stream()
            .filter(e -> e.kind() == Kind.WROTE)
            .sorted(Comparator.comparingLong(Event::at))
            .toList();
    for (int i = 1; i < writes.size(); i++) {
      assertTrue(
          writes.get(i).token() >= writes.get(i - 1).token(),
          "a write under an older lease after one under a newer: "
              + writes.get(i - 1)
              + " then "
              + writes.get(i));
    }
    assertEquals(
        Set.of(first, second),
        Set.copyOf(writes.stream().map(Event::app).toList()),
        "both leaders worked");
  }

  static boolean isLeader(ConfigurableApplicationContext app) {
    return app.isActive() && app.getBean(LockRegistryLeaderInitiator.class).getContext().isLeader();
  }

  static String leader(Map<String, ConfigurableApplicationContext> apps) {
    return apps.entrySet().stream()
        .filter(e -> isLeader(e.getValue()))
        .map(Map.Entry::getKey)
        .findFirst()
        .orElse("none");
  }

  static long count(Kind kind) {
    return journal.stream().filter(e -> e.kind() == kind).count();
  }

  static int writes(String app) {
    return (int)
        journal.stream().filter(e -> e.kind() == Kind.WROTE && e.app().equals(app)).count();
  }

  /** {@code app}'s terms as leader, [granted, revoked], each told in order. */
  static List<long[]> terms(List<Event> events, String app) {
    List<long[]> terms = new ArrayList<>();
    Long granted = null;
    for (Event e : events) {
      if (!e.app().equals(app) || e.kind() == Kind.WROTE) {
        continue;
      }
      if (e.kind() == Kind.GRANTED) {
        assertTrue(granted == null, app + " granted twice without a revoke");
        granted = e.at();
      } else if (granted != null) {
        terms.add(new long[] {granted, e.at()});
        granted = null;
      }
    }
    assertTrue(granted == null, app + " never revoked");
    return terms;
  }

  static String describe(List<Event> events) {
    long origin = events.isEmpty() ? 0 : events.get(0).at();
    return events.stream()
        .filter(e -> e.kind() != Kind.WROTE)
        .map(
            e ->
                e.app()
                    + " "
                    + e.kind()
                    + " "
                    + e.token()
                    + " at +"
                    + (e.at() - origin) / 1_000_000
                    + " ms")
        .toList()
        .toString();
  }
}
