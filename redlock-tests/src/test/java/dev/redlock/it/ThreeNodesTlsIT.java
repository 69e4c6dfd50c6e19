package dev.redlock.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.NodeOutcome;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.RedisFixture;
import dev.redlock.testkit.RedisNode;
import dev.redlock.testkit.RedisNodes;
import dev.redlock.testkit.TlsFiles;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLSocketFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.Jedis;

/**
 * The lease contract and the Redis-only tests over TLS (issue 16, item 4): three nodes serving
 * {@code rediss://} with a certificate for 127.0.0.1 from a CA made for the run, clients trusting
 * that CA through {@code RedlockConfig.tlsSocketFactory}. The contract's frozen majority is a
 * SIGSTOP of nodes the clients reach over TLS.
 */
@Tag("full") // The lease contract over TLS: the full tier.
class ThreeNodesTlsIT extends RedisQuorumContract {
  ThreeNodesTlsIT() {
    super(RedisFixture.nodes(3).tls());
  }

  /**
   * A new client's first attempt over TLS, with the default 50 ms node timeout: the handshakes do
   * not fit in it, the background connections (connectTimeout) do. Before, a fresh Redlock's first
   * three attempts over TLS failed with every node TIMED_OUT.
   */
  @Test
  void aNewClientsFirstAttemptOverTlsWinsWithTheDefaultNodeTimeout() {
    assertTrue(nodes().uris().stream().allMatch(u -> u.startsWith("rediss://")), "over TLS");
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes(nodes().uris())
            .tlsSocketFactory(redis().tls().orElseThrow().socketFactory())
            .build();
    Redlock redlock = client(config);
    Optional<Lease> lease = redlock.tryAcquire(resource(), Duration.ofSeconds(10));
    assertTrue(lease.isPresent(), "the first attempt won");
    lease.get().release();
  }

  /** A client that does not trust the nodes' CA gets no lock, and the account says why. */
  @Test
  void aClientThatDoesNotTrustTheNodesGetsNoLockAndIsToldWhy() {
    Redlock redlock =
        client(
            config()
                .tlsSocketFactory((SSLSocketFactory) SSLSocketFactory.getDefault()) // JVM's CAs
                .build());
    LockUnavailableException e =
        assertThrows(
            LockUnavailableException.class,
            () -> redlock.tryAcquire(resource(), Duration.ofSeconds(10)));
    assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
    for (NodeOutcome outcome : e.nodeOutcomes()) {
      assertEquals(NodeOutcome.Status.FAILED, outcome.status(), outcome.toString());
    }
    assertEquals(0, nodesWithKey(), "nothing was written");
  }

  /**
   * Nodes serving a certificate from the CA the client trusts, but for another host ({@code
   * DNS:other.example}, not {@code 127.0.0.1}): hostname verification refuses the handshake, so the
   * client gets no lock, writes nothing, and each node's account says why. Without the check,
   * anyone holding any certificate of that CA could answer for a node.
   */
  @Test
  void aTrustedCertificateForAnotherHostIsRefused() {
    TlsFiles otherHost = redis().tls().orElseThrow().withServerNames("DNS:other.example");
    RedisNodes impostors = redis().start(RedisFixture.nodes(3).tls(otherHost));
    Redlock redlock =
        client(
            RedlockConfig.builder()
                .nodes(impostors.uris())
                .tlsSocketFactory(otherHost.socketFactory()) // trusts the CA that signed it
                .build());
    LockUnavailableException e =
        assertThrows(
            LockUnavailableException.class,
            () -> redlock.tryAcquire(resource(), Duration.ofSeconds(10)));
    assertEquals(LockUnavailableException.Reason.QUORUM_UNREACHABLE, e.reason());
    for (NodeOutcome outcome : e.nodeOutcomes()) {
      assertEquals(NodeOutcome.Status.FAILED, outcome.status(), outcome.toString());
      assertTrue(
          outcome.detail().contains("No subject alternative names matching IP address 127.0.0.1"),
          outcome.toString());
    }
    for (RedisNode node : impostors.all()) {
      try (Jedis jedis = new Jedis("127.0.0.1", node.port(), 2000)) {
        assertEquals(
            Set.of("redlock:@life", "redlock:@witness"),
            jedis.keys("*"),
            "nothing written but the kit's vouch");
      }
    }
  }

  /**
   * A node frozen (SIGSTOP) while clients hold TLS connections to it: it costs its own vote, the
   * lock is won and released on the other two, and once it thaws its connections serve again.
   */
  @Test
  void aFrozenNodeOverTlsCostsOnlyItsVote() {
    Redlock redlock = client(config().build());
    redlock.tryAcquire(resource() + ":warm", Duration.ofSeconds(10)).orElseThrow().release();
    nodes().node(2).pause();
    try {
      Lease lease =
          org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
              NO_HANG, () -> redlock.tryAcquire(resource(), Duration.ofSeconds(10)).orElseThrow());
      NodeOutcome.Status frozen = lease.nodeOutcomes().get(2).status();
      assertTrue( // decided on the other two before the frozen node's time was up, or after
          frozen == NodeOutcome.Status.PENDING || frozen == NodeOutcome.Status.TIMED_OUT,
          lease.nodeOutcomes().toString());
      lease.release();
    } finally {
      nodes().node(2).resume();
    }
    // Another resource: the frozen node may yet run the SET it was sent while frozen after our
    // release of it (two connections: the known orphan SET of docs/design.md), until its ttl.
    Lease after = redlock.tryAcquire(resource() + ":after", Duration.ofSeconds(10)).orElseThrow();
    org.awaitility.Awaitility.await()
        .atMost(NO_HANG)
        .until(() -> after.nodeOutcomes().get(2).status() == NodeOutcome.Status.OK);
    after.release();
  }
}
