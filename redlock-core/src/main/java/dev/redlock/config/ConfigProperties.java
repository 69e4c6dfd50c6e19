package dev.redlock.config;

import dev.redlock.RedlockListener;
import dev.redlock.config.RedlockConfig.Builder;
import java.time.DateTimeException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The {@code redlock.*} properties, one row per key: its name, how its text is read and which
 * builder method it sets. The javadoc of {@link RedlockConfig#fromProperties} and {@code
 * docs/configuration.md} name the same keys (a test compares the three). The builder methods check
 * the values read, so a rule is never checked here too.
 */
final class ConfigProperties {
  static final String PREFIX = "redlock.";

  /** Reads a key's text (never null), given the key and the text; the key names it in errors. */
  interface Reader<T> extends BiFunction<String, String, T> {}

  /** Reads trimmed text with {@code parse}; an error names the key, the form and the text. */
  private static <T> Reader<T> reader(String expected, Function<String, T> parse) {
    return (key, text) -> {
      try {
        return parse.apply(text.trim());
      } catch (IllegalArgumentException | DateTimeException e) {
        throw new IllegalArgumentException(
            key + " must be " + expected + ", was '" + text + "'", e);
      }
    };
  }

  private static final Reader<String> TEXT = (key, text) -> text;
  private static final Reader<Integer> INTEGER = reader("an integer", Integer::parseInt);
  private static final Reader<Double> NUMBER = reader("a number", Double::parseDouble);
  private static final Reader<Boolean> BOOLEAN =
      reader(
          "true or false",
          s ->
              switch (s.toLowerCase(Locale.ROOT)) {
                case "true" -> true;
                case "false" -> false;
                default -> throw new IllegalArgumentException(s);
              });
  static final Reader<Duration> DURATION =
      reader("a duration like 50ms, 2s, 1m or PT0.05S", ConfigProperties::shortOrIso);
  private static final Reader<List<String>> URIS =
      (key, text) ->
          Arrays.stream(text.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();

  private static <E extends Enum<E>> Reader<E> choice(Class<E> type) {
    String choices = Arrays.toString(type.getEnumConstants());
    return reader("one of " + choices, s -> Enum.valueOf(type, s.toUpperCase(Locale.ROOT)));
  }

  /** One key: {@code shared} by every store, or a setting of the Redis nodes alone. */
  private record Row<T>(String key, boolean shared, Reader<T> reader, BiConsumer<Builder, T> set) {
    void apply(Builder builder, String text) {
      set.accept(builder, reader.apply(key, text));
    }
  }

  private static <T> Row<T> redis(String name, Reader<T> reader, BiConsumer<Builder, T> set) {
    return new Row<>(PREFIX + name, false, reader, set);
  }

  private static <T> Row<T> shared(String name, Reader<T> reader, BiConsumer<Builder, T> set) {
    return new Row<>(PREFIX + name, true, reader, set);
  }

  private static final List<Row<?>> ROWS =
      List.of(
          redis("nodes", URIS, Builder::nodes),
          redis("quorum", INTEGER, Builder::quorum),
          redis("keyPrefix", TEXT, Builder::keyPrefix),
          shared("clockDriftFactor", NUMBER, Builder::clockDriftFactor),
          shared("nodeTimeout", DURATION, Builder::nodeTimeout),
          shared("retryDelay", DURATION, Builder::retryDelay),
          shared("retryJitter", DURATION, Builder::retryJitter),
          shared("maxAttemptsInFlight", INTEGER, Builder::maxAttemptsInFlight),
          redis("maxConnectionsPerNode", INTEGER, Builder::maxConnectionsPerNode),
          redis("connectTimeout", DURATION, Builder::connectTimeout),
          shared("renewalFraction", NUMBER, Builder::renewalFraction),
          shared("maxHold", DURATION, Builder::maxHold),
          shared("taskInterruption", choice(TaskInterruption.class), Builder::taskInterruption),
          shared("maxTtl", DURATION, Builder::maxTtl),
          redis("restartGuard", choice(RestartGuard.class), Builder::restartGuard),
          shared(
              "auditLog",
              BOOLEAN,
              (b, on) -> {
                if (on) {
                  b.listener(RedlockListener.auditLog());
                }
              }));

  private static final Map<String, Row<?>> BY_KEY =
      ROWS.stream().collect(Collectors.toMap(Row::key, row -> row));

  private ConfigProperties() {}

  /** Every key, in the order of {@code docs/configuration.md}'s table. */
  static List<String> keys() {
    return ROWS.stream().map(Row::key).toList();
  }

  /** The keys of the settings every store shares, in table order. */
  static List<String> sharedKeys() {
    return ROWS.stream().filter(Row::shared).map(Row::key).toList();
  }

  /** {@link Builder#properties}, on a builder that {@code hasNodes} or {@code hasStore} already. */
  static Builder apply(Properties properties, Builder builder, boolean hasNodes, boolean hasStore) {
    Objects.requireNonNull(properties, "properties must not be null");
    for (String key : properties.stringPropertyNames()) {
      if (key.startsWith(PREFIX) && !BY_KEY.containsKey(key)) {
        throw new IllegalArgumentException(
            "unknown property " + key + "; known keys are " + keys().stream().sorted().toList());
      }
    }
    for (String key : properties.stringPropertyNames()) {
      if (hasStore && key.startsWith(PREFIX) && !BY_KEY.get(key).shared) {
        throw new IllegalArgumentException(
            key
                + " is a setting of the Redis store only: it does not apply with a store"
                + " (RedlockConfig.Builder.store); the keys that do are "
                + sharedKeys().stream().sorted().toList());
      }
    }
    String nodes = properties.getProperty(PREFIX + "nodes");
    if ((nodes == null || nodes.isBlank()) && !hasNodes && !hasStore) {
      throw new IllegalArgumentException(
          "redlock.nodes is required: comma-separated redis:// URIs");
    }
    for (Row<?> row : ROWS) {
      String text = properties.getProperty(row.key);
      if (text != null) {
        row.apply(builder, text);
      }
    }
    return builder;
  }

  private static final Pattern SHORT_DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h)");

  private static Duration shortOrIso(String text) {
    Matcher m = SHORT_DURATION.matcher(text.toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      return Duration.parse(text);
    }
    long amount = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(amount);
      case "s" -> Duration.ofSeconds(amount);
      case "m" -> Duration.ofMinutes(amount);
      default -> Duration.ofHours(amount);
    };
  }
}
