package dev.redlock.node;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;

/**
 * One node's address, parsed from {@code redis://[user:password@]host[:port][/db]} or {@code
 * rediss://...} for TLS. Equality is by host and port: two URIs that differ only in database or
 * credentials name the same Redis server, which is not an independent node.
 */
public final class NodeUri {
  private static final int DEFAULT_PORT = 6379;

  private final String scheme;
  private final String host;
  private final int port;
  private final int database;
  private final String user;
  private final String password;
  private final String given; // as configured, credentials included

  private NodeUri(
      String scheme,
      String host,
      int port,
      int database,
      String user,
      String password,
      String given) {
    this.scheme = scheme;
    this.host = host;
    this.port = port;
    this.database = database;
    this.user = user;
    this.password = password;
    this.given = given;
  }

  /**
   * Parses a node URI.
   *
   * @throws NullPointerException if {@code text} is null
   * @throws IllegalArgumentException naming the rule the text breaks
   */
  public static NodeUri parse(String text) {
    Objects.requireNonNull(text, "node must not be null");
    String trimmed = text.trim();
    URI uri;
    try {
      uri = new URI(trimmed);
    } catch (URISyntaxException e) {
      throw invalid(text, "it is not a valid URI (" + e.getReason() + ")");
    }
    String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!"redis".equals(scheme) && !"rediss".equals(scheme)) {
      throw invalid(text, "the scheme must be redis:// or rediss://");
    }
    String host = uri.getHost();
    if (host == null || host.isEmpty()) {
      throw invalid(text, "it names no host");
    }
    int port = uri.getPort() == -1 ? DEFAULT_PORT : uri.getPort();
    if (port < 1 || port > 65535) {
      throw invalid(text, "the port must be 1..65535");
    }
    int database = 0;
    String path = uri.getPath();
    if (path != null && !path.isEmpty() && !"/".equals(path)) {
      try {
        database = Integer.parseInt(path.substring(1));
      } catch (NumberFormatException e) {
        throw invalid(text, "the path must be a database number, like /0");
      }
      if (database < 0) {
        throw invalid(text, "the database number must be >= 0");
      }
    }
    if (uri.getQuery() != null || uri.getFragment() != null) {
      throw invalid(text, "query parameters and fragments are not supported");
    }
    String user = null;
    String password = null;
    String userInfo = uri.getRawUserInfo();
    if (userInfo != null && !userInfo.isEmpty()) {
      int colon = userInfo.indexOf(':');
      if (colon < 0) {
        password = decode(userInfo);
      } else {
        String u = userInfo.substring(0, colon);
        user = u.isEmpty() ? null : decode(u);
        password = decode(userInfo.substring(colon + 1));
      }
    }
    return new NodeUri(scheme, host, port, database, user, password, text);
  }

  private static String decode(String s) {
    return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  private static IllegalArgumentException invalid(String text, String rule) {
    // Never echo credentials back into a log: show the URI with its user info masked.
    return new IllegalArgumentException(
        "node must be a URI like redis://[user:password@]host:port[/db], but "
            + rule
            + ": '"
            + mask(text)
            + "'");
  }

  private static String mask(String text) {
    int at = text.lastIndexOf('@');
    int start = text.indexOf("://");
    return at > 0 && start >= 0 && at > start
        ? text.substring(0, start + 3) + "***" + text.substring(at)
        : text;
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }

  public int database() {
    return database;
  }

  public boolean tls() {
    return "rediss".equals(scheme);
  }

  /** The URI as configured, credentials included: never for a log. */
  public String withCredentials() {
    return given;
  }

  /** The URI without credentials, safe for logs: {@code redis://127.0.0.1:7001}. */
  @Override
  public String toString() {
    String address = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
    return scheme + "://" + address + ":" + port + (database == 0 ? "" : "/" + database);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof NodeUri other && port == other.port && host.equalsIgnoreCase(other.host);
  }

  @Override
  public int hashCode() {
    return host.toLowerCase(Locale.ROOT).hashCode() * 31 + port;
  }

  /**
   * Opens a plain connection to this node as the lock connects (database, TLS, credentials, {@code
   * timeout} for connecting and for every reply), named {@code clientName} in {@code CLIENT LIST};
   * the caller closes it.
   */
  public Jedis connect(Duration timeout, String clientName, SSLSocketFactory tls) {
    return new Jedis(new HostAndPort(host, port), clientConfig(timeout, clientName, tls).build());
  }

  /**
   * How we connect to this node: its database, TLS, credentials, timeouts and a client name. Over
   * {@code rediss://} the certificate must be trusted by {@code tls} (null: the JVM's default,
   * {@code javax.net.ssl.trustStore}) and must name the host: hostname verification is always on,
   * or anyone on the path could answer for the node.
   */
  DefaultJedisClientConfig.Builder clientConfig(
      Duration timeout, String clientName, SSLSocketFactory tls) {
    int millis = (int) timeout.toMillis();
    DefaultJedisClientConfig.Builder client =
        DefaultJedisClientConfig.builder()
            .connectionTimeoutMillis(millis)
            .socketTimeoutMillis(millis)
            .database(database)
            .ssl(tls())
            .clientName(clientName)
            // CLIENT SETINFO is an extra round trip per connection, and Redis 6.2 rejects it.
            .clientSetInfoConfig(ClientSetInfoConfig.DISABLED);
    if (tls()) {
      SSLParameters parameters = new SSLParameters();
      parameters.setEndpointIdentificationAlgorithm("HTTPS");
      client
          .sslSocketFactory(tls != null ? tls : (SSLSocketFactory) SSLSocketFactory.getDefault())
          .sslParameters(parameters);
    }
    if (password != null) {
      client.user(user).password(password);
    }
    return client;
  }
}
