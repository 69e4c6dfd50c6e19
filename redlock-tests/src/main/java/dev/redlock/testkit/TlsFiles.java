package dev.redlock.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * A certificate authority and a server certificate for {@code 127.0.0.1} (and {@code localhost}),
 * made with {@code openssl} for one test run, so that nodes can serve TLS ({@link
 * RedisFixture.Spec#tls()}) and clients can trust them: {@link #socketFactory()} for a {@code
 * RedlockConfig}, {@link #trustStore()} for a JVM ({@code -Djavax.net.ssl.trustStore}).
 */
public final class TlsFiles {
  /** The password of {@link #trustStore()}. */
  public static final String TRUST_STORE_PASSWORD = "redlock-test";

  private final Path dir;
  private final String server; // the server certificate's and key's file name, without extension
  private final SSLSocketFactory socketFactory;

  private TlsFiles(Path dir, String server, SSLSocketFactory socketFactory) {
    this.dir = dir;
    this.server = server;
    this.socketFactory = socketFactory;
  }

  private TlsFiles(Path dir) {
    this.dir = dir;
    this.server = "server";
    try {
      KeyStore trust = KeyStore.getInstance("PKCS12");
      trust.load(null, null);
      try (InputStream in = Files.newInputStream(caCert())) {
        Certificate ca = CertificateFactory.getInstance("X.509").generateCertificate(in);
        trust.setCertificateEntry("redlock-test-ca", ca);
      }
      try (OutputStream out = Files.newOutputStream(trustStore())) {
        trust.store(out, TRUST_STORE_PASSWORD.toCharArray());
      }
      TrustManagerFactory trustManagers =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      trustManagers.init(trust);
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(null, trustManagers.getTrustManagers(), null);
      this.socketFactory = context.getSocketFactory();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot load the test CA: " + e.getMessage(), e);
    }
  }

  /**
   * Makes a fresh CA and server certificate in a temporary directory.
   *
   * @throws MissingToolException if {@code openssl} cannot be run
   */
  public static TlsFiles generate() {
    try {
      Path dir = Files.createTempDirectory("redlock-tls-");
      // A CA, then a key and a certificate for the node, signed by the CA.
      openssl(
          dir, "req -x509 " + NEW_EC_KEY + " -keyout ca.key -out ca.crt -subj /CN=redlock-test-ca");
      serverCertificate(dir, "server", "IP:127.0.0.1,DNS:localhost");
      return new TlsFiles(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Another server certificate from the same CA, naming only {@code subjectAltName} ({@code
   * DNS:other.example}, say): for a node whose certificate a client trusts but which does not name
   * the address the client dialled, so that only hostname verification can refuse it. The CA, the
   * trust store and {@link #socketFactory()} are this one's.
   *
   * @throws IllegalArgumentException if {@code subjectAltName} is blank or holds a space
   */
  public TlsFiles withServerNames(String subjectAltName) {
    if (subjectAltName == null || subjectAltName.isBlank() || subjectAltName.contains(" ")) {
      throw new IllegalArgumentException(
          "subjectAltName must be like DNS:other.example, was '" + subjectAltName + "'");
    }
    String name = "server-" + subjectAltName.replaceAll("[^A-Za-z0-9.-]", "_");
    try {
      serverCertificate(dir, name, subjectAltName);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new TlsFiles(dir, name, socketFactory);
  }

  /** {@code name.key} and {@code name.crt} in {@code dir}, signed by its CA, for {@code san}. */
  private static void serverCertificate(Path dir, String name, String san) throws IOException {
    Files.writeString(dir.resolve(name + ".ext"), "subjectAltName=" + san + "\n");
    openssl(
        dir,
        "req " + NEW_EC_KEY + " -keyout " + name + ".key -out " + name + ".csr -subj /CN=" + name);
    openssl(
        dir,
        "x509 -req -in "
            + name
            + ".csr -CA ca.crt -CAkey ca.key -CAcreateserial -out "
            + name
            + ".crt -days 2 -extfile "
            + name
            + ".ext");
  }

  /** A new P-256 key, unencrypted, for two days: quick to make, enough for one run. */
  private static final String NEW_EC_KEY =
      "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2";

  /**
   * Runs {@code openssl} with {@code args} (split on spaces: none of them holds one) in {@code
   * dir}.
   */
  private static void openssl(Path dir, String args) throws IOException {
    List<String> command = new java.util.ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args.split(" ")));
    Process process;
    try {
      process =
          new ProcessBuilder(command)
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("openssl.log").toFile())
              .start();
    } catch (IOException e) {
      throw new MissingToolException("cannot run openssl (apt-get install openssl): " + e, e);
    }
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
        process.destroyForcibly();
        throw new IllegalStateException(
            "openssl " + args + " failed: " + Files.readString(dir.resolve("openssl.log")));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      throw new IllegalStateException("interrupted while running openssl", e);
    }
  }

  /** The CA certificate (PEM). */
  public Path caCert() {
    return dir.resolve("ca.crt");
  }

  /**
   * The node's certificate (PEM), for {@code 127.0.0.1} and {@code localhost} (or for the names of
   * {@link #withServerNames}).
   */
  public Path serverCert() {
    return dir.resolve(server + ".crt");
  }

  /** The node's private key (PEM). */
  public Path serverKey() {
    return dir.resolve(server + ".key");
  }

  /** A PKCS12 trust store holding the CA, password {@link #TRUST_STORE_PASSWORD}. */
  public Path trustStore() {
    return dir.resolve("trust.p12");
  }

  /** Sockets that trust the CA (and nothing else), for {@code RedlockConfig.tlsSocketFactory}. */
  public SSLSocketFactory socketFactory() {
    return socketFactory;
  }
}
