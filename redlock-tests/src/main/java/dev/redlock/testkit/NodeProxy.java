package dev.redlock.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.netcrusher.NetCrusherException;
import org.netcrusher.core.reactor.NioReactor;
import org.netcrusher.core.throttle.Throttler;
import org.netcrusher.tcp.TcpCrusher;
import org.netcrusher.tcp.TcpCrusherBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A TCP fault proxy in front of one node (NetCrusher): clients connect to {@link #uri()}, and the
 * test can cut the link, freeze it, or slow it down, then {@link #restore()} it. Every fault is
 * logged with a timestamp on {@code dev.redlock.testkit.faults}.
 */
public final class NodeProxy implements AutoCloseable {
  private static final Logger faults = LoggerFactory.getLogger("dev.redlock.testkit.faults");

  private final TcpCrusher crusher;
  private final int port;
  private final String target;
  private final String client;
  private final MutableDelay delay = new MutableDelay();
  private boolean faulty;

  /** Set while the link is frozen: a connection whose pair is made meanwhile is frozen too. */
  private volatile boolean frozen;

  NodeProxy(NioReactor reactor, RedisNode node, String client) {
    this.port = freePort();
    this.target = node.uri();
    this.client = client;
    this.crusher =
        TcpCrusherBuilder.builder()
            .withReactor(reactor)
            .withBindAddress("127.0.0.1", port)
            .withConnectAddress("127.0.0.1", node.port())
            // NetCrusher's "incoming" side is what the node sends back: the replies.
            .withIncomingThrottlerFactory(address -> delay)
            // freeze() freezes the pairs that exist; a connection accepted just before it, whose
            // pair is made just after, would pass traffic through a "frozen" link.
            .withCreationListener(this::freezeIfFrozen)
            // ... and on the proxy's own thread, before the pair's first bytes pass, serialised
            // with restore()'s unfreeze (NetCrusher defers listeners to another thread otherwise).
            .withDeferredListeners(false)
            .buildAndOpen();
  }

  /** Where clients connect: {@code redis://127.0.0.1:PROXY_PORT}. */
  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  /** Cuts the link: open connections are closed and new ones are refused. */
  public synchronized void cut() {
    if (!crusher.isOpen()) {
      return;
    }
    faulty = true;
    faults.info("cut {} ({} -> node {})", uri(), client, target);
    crusher.close();
  }

  private void freezeIfFrozen(java.net.InetSocketAddress client) {
    if (frozen) {
      org.netcrusher.NetFreezer pair = this.crusher.getClientFreezer(client);
      if (pair != null && !pair.isFrozen()) {
        pair.freeze(); // on the proxy's selector thread (listeners not deferred): done at once
      }
    }
  }

  /** Freezes the link: connections stay open, nothing passes either way. */
  public synchronized void freeze() {
    faulty = true;
    frozen = true;
    faults.info("freeze {} ({} -> node {})", uri(), client, target);
    if (crusher.isOpen() && !crusher.isFrozen()) {
      crusher.freeze();
    }
  }

  /**
   * Delays every reply from the node to clients by {@code latency}: the node does what it is asked
   * at once, the client learns it late (a slow link, or a busy client's socket). To the client, the
   * node is slow.
   */
  public synchronized void latency(Duration latency) {
    faulty = true;
    faults.info("latency +{} ms on {} ({} -> node {})", latency.toMillis(), uri(), client, target);
    delay.nanos = latency.toNanos();
  }

  /** Ends every fault: the link is open, flowing and fast again. */
  public synchronized void restore() {
    if (!faulty) {
      return;
    }
    faulty = false;
    frozen = false;
    delay.nanos = 0;
    try {
      if (!crusher.isOpen()) {
        crusher.open();
      }
      if (crusher.isFrozen()) {
        crusher.unfreeze();
      }
    } catch (NetCrusherException e) {
      // A connection pair broke while frozen: reopening drops the held traffic, as a reset would.
      faults.info("restore {}: {}; reopening", uri(), e.getMessage());
      if (crusher.isOpen()) {
        crusher.close();
      }
      crusher.open();
    }
    faults.info("restore {} ({} -> node {})", uri(), client, target);
  }

  @Override
  public synchronized void close() {
    if (crusher.isOpen()) {
      crusher.close();
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One delay for all clients of this proxy, changed by the test while traffic flows. */
  private static final class MutableDelay implements Throttler {
    volatile long nanos;

    @Override
    public long calculateDelayNs(ByteBuffer bytes) {
      return nanos <= 0 ? Throttler.NO_DELAY_NS : nanos;
    }
  }
}
