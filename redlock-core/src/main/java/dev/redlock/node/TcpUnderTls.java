package dev.redlock.node;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import javax.net.ssl.SSLSocketFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.util.IOUtils;

/**
 * The TLS socket factory a client config names, remembering the TCP socket Jedis connects and hands
 * it to layer TLS on, so that a connection can be closed from any thread without writing.
 *
 * <p>Closing a TLS socket first writes a close_notify. The JDK skips it while a write holds the TLS
 * record lock (Jedis sets SO_LINGER to 0), but with no TLS write in progress and the send queue to
 * a frozen node (or across a partition) full, it blocks whoever closes until the node takes bytes
 * again. Closing the TCP socket first makes the TLS close write nothing ({@code
 * ReleaseNoticesCutTest}, {@code SharedTlsConnectionTest}).
 */
final class TcpUnderTls extends SSLSocketFactory {
  private static final Logger log = LoggerFactory.getLogger(TcpUnderTls.class);
  private static volatile boolean missingLogged;

  private final SSLSocketFactory tls;
  private volatile Socket socket;

  private TcpUnderTls(SSLSocketFactory tls) {
    this.tls = tls;
  }

  /**
   * A factory for one connection made with {@code config}, or null if it makes no TLS socket from a
   * TCP one here: plain TCP, or Jedis's {@code SslOptions}, which this library never sets.
   */
  static TcpUnderTls of(JedisClientConfig config) {
    if (!config.isSsl() || config.getSslOptions() != null) {
      return null;
    }
    return new TcpUnderTls(
        config.getSslSocketFactory() != null
            ? config.getSslSocketFactory()
            : (SSLSocketFactory) SSLSocketFactory.getDefault());
  }

  /** {@code config} with its TLS sockets made through {@code under} (if not null). */
  static JedisClientConfig config(JedisClientConfig config, TcpUnderTls under) {
    return under == null
        ? config
        : DefaultJedisClientConfig.builder().from(config).sslSocketFactory(under).build();
  }

  /**
   * The TCP socket {@code under} was handed, or null: plain TCP, or a Jedis that no longer layers
   * TLS so (logged once: a close may then block on a frozen node; the TLS tests check it is found).
   */
  static Socket socket(TcpUnderTls under) {
    if (under == null) {
      return null;
    }
    Socket tcp = under.socket;
    if (tcp == null && !missingLogged) {
      missingLogged = true;
      log.warn(
          "a TLS connection was made without handing its TCP socket to the socket factory (a Jedis"
              + " version this library was not built for): closing one to a frozen node may block");
    }
    return tcp;
  }

  /** Closes {@code tcp} (if not null), before its TLS socket is closed: see the class comment. */
  static void closeFirst(Socket tcp) {
    IOUtils.closeQuietly(tcp); // null: plain TCP, nothing to do
  }

  @Override
  public Socket createSocket(Socket tcp, String host, int port, boolean autoClose)
      throws IOException {
    socket = tcp;
    return tls.createSocket(tcp, host, port, autoClose);
  }

  @Override
  public String[] getDefaultCipherSuites() {
    return tls.getDefaultCipherSuites();
  }

  @Override
  public String[] getSupportedCipherSuites() {
    return tls.getSupportedCipherSuites();
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    return tls.createSocket(host, port);
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
      throws IOException {
    return tls.createSocket(host, port, localHost, localPort);
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    return tls.createSocket(host, port);
  }

  @Override
  public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
      throws IOException {
    return tls.createSocket(address, port, localAddress, localPort);
  }
}
