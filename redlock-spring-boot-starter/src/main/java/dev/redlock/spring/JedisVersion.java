package dev.redlock.spring;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import redis.clients.jedis.Jedis;

/**
 * The Jedis on the class path, checked before the Redlock is made: the library is built and tested
 * on Jedis 7, and Spring Boot 3.5's dependency management puts Jedis 6 in its place unless told
 * otherwise.
 */
final class JedisVersion {
  static final int NEEDED_MAJOR = 7;

  private JedisVersion() {}

  /** The version Jedis's jar says it is, or null if it does not say. */
  static String onClassPath() {
    try (InputStream in = Jedis.class.getResourceAsStream("pom.properties")) {
      if (in == null) {
        return null;
      }
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * Fails if {@code version} is older than Jedis {@value #NEEDED_MAJOR}; an unknown version passes.
   *
   * @throws RedlockSettingsException saying what to set
   */
  static void check(String version) {
    if (version == null) {
      return;
    }
    int major;
    try {
      major = Integer.parseInt(version.split("\\.")[0]);
    } catch (NumberFormatException e) {
      return;
    }
    if (major < NEEDED_MAJOR) {
      throw new RedlockSettingsException(
          "Jedis "
              + version
              + " is on the class path, but Redlock needs Jedis "
              + NEEDED_MAJOR
              + " (it is built and tested on 7.0.0)",
          "Spring Boot 3.5 manages Jedis 6: set the Maven property <jedis.version>7.0.0</jedis.version>"
              + " (Gradle: ext['jedis.version'] = '7.0.0'), or manage redis.clients:jedis 7.0.0"
              + " yourself.",
          null);
    }
  }
}
