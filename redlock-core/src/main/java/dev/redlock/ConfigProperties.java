package dev.redlock;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code redlock.*} properties, one row per key: its name and how it sets the builder. The one
 * list {@link RedlockConfig#fromProperties} reads, whose keys its javadoc and {@code
 * docs/configuration.md} name; a test compares the three, so none can drift from the others.
 */
final class ConfigProperties {
  static final String PREFIX = "redlock.";

  /** Sets the builder from a key's text (never null); {@code key} names it in errors. */
  private interface Setter {
    void set(RedlockConfig.Builder builder, String key, String text);
  }

  /** One key: {@code shared} by every store, or a setting of the Redis nodes alone. */
  private record Row(String key, Setter setter, boolean shared) {}

  private static Row redis(String name, Setter setter) {
    return new Row(PREFIX + name, setter, false);
  }

  private static Row shared(String name, Setter setter) {
    return new Row(PREFIX + name, setter, true);
  }

  private static final List<Row> ROWS =
      List.of(
          redis(
              "nodes",
              (b, k, v) ->
                  b.nodes(
                      Arrays.stream(v.split(","))
                          .map(String::trim)
                          .filter(s -> !s.isEmpty())
                          .toList())),
          redis("quorum", (b, k, v) -> b.quorum(integer(k, v))),
          redis("keyPrefix", (b, k, v) -> b.keyPrefix(v)),
          shared("clockDriftFactor", (b, k, v) -> b.clockDriftFactor(number(k, v))),
          shared("nodeTimeout", (b, k, v) -> b.nodeTimeout(duration(k, v))),
          shared("retryDelay", (b, k, v) -> b.retryDelay(duration(k, v))),
          shared("retryJitter", (b, k, v) -> b.retryJitter(duration(k, v))),
          shared("maxAttemptsInFlight", (b, k, v) -> b.maxAttemptsInFlight(integer(k, v))),
          redis("maxConnectionsPerNode", (b, k, v) -> b.maxConnectionsPerNode(integer(k, v))),
          redis("connectTimeout", (b, k, v) -> b.connectTimeout(duration(k, v))),
          shared("renewalFraction", (b, k, v) -> b.renewalFraction(number(k, v))),
          shared("maxHold", (b, k, v) -> b.maxHold(duration(k, v))),
          shared(
              "taskInterruption",
              (b, k, v) -> b.taskInterruption(oneOf(k, v, TaskInterruption.class))),
          shared("maxTtl", (b, k, v) -> b.maxTtl(duration(k, v))),
          redis("restartGuard", (b, k, v) -> b.restartGuard(oneOf(k, v, RestartGuard.class))),
          shared(
              "auditLog",
              (b, k, v) -> {
                if (bool(k, v)) {
                  b.listener(RedlockListener.auditLog());
                }
              }));

  private static final Map<String, Row> BY_KEY = new LinkedHashMap<>();

  static {
    for (Row row : ROWS) {
      BY_KEY.put(row.key, row);
    }
  }

  private ConfigProperties() {}

  /** Every key, in the order of {@code docs/configuration.md}'s table. */
  static List<String> keys() {
    return List.copyOf(BY_KEY.keySet());
  }

  /**
   * Applies the {@code redlock.*} properties to {@code builder}: {@code redlock.nodes} is required
   * unless the builder has nodes or a store already; with a store, a key of the Redis nodes alone
   * is an error.
   */
  static RedlockConfig.Builder apply(Properties properties, RedlockConfig.Builder builder) {
    Objects.requireNonNull(properties, "properties must not be null");
    for (String key : properties.stringPropertyNames()) {
      if (key.startsWith(PREFIX) && !BY_KEY.containsKey(key)) {
        throw new IllegalArgumentException(
            "unknown property " + key + "; known keys are " + keys().stream().sorted().toList());
      }
    }
    if (builder.hasStore()) {
      for (String key : properties.stringPropertyNames()) {
        if (key.startsWith(PREFIX) && !BY_KEY.get(key).shared) {
          throw new IllegalArgumentException(
              key
                  + " is a setting of the Redis store only: it does not apply with a store"
                  + " (RedlockConfig.Builder.store); the keys that do are "
                  + sharedKeys().stream().sorted().toList());
        }
      }
    }
    String nodes = properties.getProperty("redlock.nodes");
    if ((nodes == null || nodes.isBlank()) && !builder.hasNodes() && !builder.hasStore()) {
      throw new IllegalArgumentException(
          "redlock.nodes is required: comma-separated redis:// URIs");
    }
    for (Row row : ROWS) {
      String value = properties.getProperty(row.key);
      if (value != null) {
        row.setter.set(builder, row.key, value);
      }
    }
    return builder;
  }

  /** The keys of the settings every store shares, in table order. */
  static List<String> sharedKeys() {
    return ROWS.stream().filter(Row::shared).map(Row::key).toList();
  }

  private static final Pattern SHORT_DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h)");

  /**
   * Parses {@code 50ms}, {@code 2s}, {@code 1m}, {@code 1h} or ISO-8601 ({@code PT0.05S}).
   *
   * @throws IllegalArgumentException naming {@code key} and the forms accepted
   */
  static Duration duration(String key, String value) {
    Matcher m = SHORT_DURATION.matcher(value.trim().toLowerCase(Locale.ROOT));
    if (m.matches()) {
      long amount = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(amount);
        case "s" -> Duration.ofSeconds(amount);
        case "m" -> Duration.ofMinutes(amount);
        default -> Duration.ofHours(amount);
      };
    }
    try {
      return Duration.parse(value.trim());
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          key + " must be a duration like 50ms, 2s, 1m or PT0.05S, was '" + value + "'");
    }
  }

  private static boolean bool(String key, String value) {
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default ->
          throw new IllegalArgumentException(key + " must be true or false, was '" + value + "'");
    };
  }

  private static double number(String key, String value) {
    try {
      return Double.parseDouble(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be a number, was '" + value + "'");
    }
  }

  private static int integer(String key, String value) {
    try {
      return Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(key + " must be an integer, was '" + value + "'");
    }
  }

  private static <E extends Enum<E>> E oneOf(String key, String value, Class<E> type) {
    try {
      return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          key
              + " must be one of "
              + Arrays.toString(type.getEnumConstants())
              + ", was '"
              + value
              + "'");
    }
  }
}
