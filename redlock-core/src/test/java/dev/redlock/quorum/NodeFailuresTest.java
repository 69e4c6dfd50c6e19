package dev.redlock.quorum;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.redlock.NodeOutcome;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/** Each way a node can fail reads as one phrase a person on call can act on. */
class NodeFailuresTest {
  @Test
  void connectFailuresJedisKeepsAsSuppressedAreFound() {
    JedisConnectionException e =
        new JedisConnectionException("Failed to connect to 127.0.0.1:7001.");
    e.addSuppressed(new ConnectException("Connection refused"));
    assertEquals("connection refused: Connection refused", NodeFailures.describe(e));
    assertEquals(NodeOutcome.Status.FAILED, NodeFailures.status(e));
  }

  @Test
  void unknownHost() {
    JedisConnectionException e =
        new JedisConnectionException(
            "Failed to connect", new UnknownHostException("no-such-host.invalid"));
    assertEquals("unknown host: no-such-host.invalid", NodeFailures.describe(e));
  }

  @Test
  void readTimeoutIsTimedOut() {
    JedisConnectionException e =
        new JedisConnectionException(new SocketTimeoutException("Read timed out"));
    assertEquals(NodeOutcome.Status.TIMED_OUT, NodeFailures.status(e));
  }

  @Test
  void errorRepliesAreQuotedAndAuthenticationIsNamed() {
    assertEquals(
        "authentication failed: WRONGPASS invalid username-password pair",
        NodeFailures.describe(new JedisDataException("WRONGPASS invalid username-password pair")));
    assertEquals(
        "error reply: OOM command not allowed",
        NodeFailures.describe(new JedisDataException("OOM command not allowed")));
  }
}
