package dev.redlock.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The property keys cannot drift: the keys {@link RedlockConfig#fromProperties} reads are the keys
 * its javadoc names and the keys docs/configuration.md's table documents (issue 14, item 2).
 */
class ConfigurationDocsTest {
  private static final Pattern KEY = Pattern.compile("redlock\\.[A-Za-z]+");

  static Set<String> keysIn(String text) {
    Set<String> keys = new TreeSet<>();
    Matcher m = KEY.matcher(text);
    while (m.find()) {
      keys.add(m.group());
    }
    return keys;
  }

  static String between(String text, String from, String to) {
    int start = text.indexOf(from);
    assertTrue(start >= 0, "not found: " + from);
    int end = text.indexOf(to, start);
    assertTrue(end >= 0, "not found after it: " + to);
    return text.substring(start, end);
  }

  @Test
  void everyKeyReadIsNamedInTheJavadocAndDocumented() throws IOException {
    Set<String> read = new TreeSet<>(ConfigProperties.keys());
    String source =
        Files.readString(Path.of("src/main/java/dev/redlock/config/RedlockConfig.java"));
    String javadoc =
        between(source, "Reads a configuration from properties", "fromProperties(Properties");
    String docs = Files.readString(Path.of("../docs/configuration.md"));
    String table = between(docs, "| builder method | property key |", "\n\n");
    assertEquals(read, keysIn(javadoc), "RedlockConfig.fromProperties's javadoc");
    assertEquals(read, keysIn(table), "docs/configuration.md's table");
  }
}
