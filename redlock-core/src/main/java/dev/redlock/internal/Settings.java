package dev.redlock.internal;

import dev.redlock.RedlockConfig;
import dev.redlock.TaskInterruption;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.Locale;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@link RedlockConfig} from {@link Properties}; the keys are documented in
 * docs/configuration.md.
 */
public final class Settings {
  static final String PREFIX = "redlock.";
  private static final Set<String> KEYS =
      Set.of(
          "redlock.nodes",
          "redlock.quorum",
          "redlock.keyPrefix",
          "redlock.clockDriftFactor",
          "redlock.nodeTimeout",
          "redlock.retryDelay",
          "redlock.retryJitter",
          "redlock.maxConnectionsPerNode",
          "redlock.renewalFraction",
          "redlock.maxHold",
          "redlock.taskInterruption",
          "redlock.maxTtl",
          "redlock.trustFsyncedAofRestarts",
          "redlock.auditLog");
  private static final Pattern SHORT_DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h)");

  private Settings() {}

  /** Applies the {@code redlock.*} properties to the builder and builds. */
  public static RedlockConfig read(Properties p, RedlockConfig.Builder builder) {
    Objects.requireNonNull(p, "properties must not be null");
    for (String key : p.stringPropertyNames()) {
      if (key.startsWith(PREFIX) && !KEYS.contains(key)) {
        throw new IllegalArgumentException(
            "unknown property " + key + "; known keys are " + KEYS.stream().sorted().toList());
      }
    }
    String nodes = p.getProperty("redlock.nodes");
    if (nodes == null || nodes.isBlank()) {
      throw new IllegalArgumentException(
          "redlock.nodes is required: comma-separated redis:// URIs");
    }
    builder.nodes(
        Arrays.stream(nodes.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList());
    String v;
    if ((v = p.getProperty("redlock.quorum")) != null) {
      builder.quorum(integer("redlock.quorum", v));
    }
    if ((v = p.getProperty("redlock.keyPrefix")) != null) {
      builder.keyPrefix(v);
    }
    if ((v = p.getProperty("redlock.clockDriftFactor")) != null) {
      builder.clockDriftFactor(number("redlock.clockDriftFactor", v));
    }
    if ((v = p.getProperty("redlock.renewalFraction")) != null) {
      builder.renewalFraction(number("redlock.renewalFraction", v));
    }
    if ((v = p.getProperty("redlock.auditLog")) != null) {
      String flag = v.trim().toLowerCase(Locale.ROOT);
      if (!flag.equals("true") && !flag.equals("false")) {
        throw new IllegalArgumentException(
            "redlock.auditLog must be true or false, was '" + v + "'");
      }
      if (flag.equals("true")) {
        builder.listener(dev.redlock.RedlockListener.auditLog());
      }
    }
    if ((v = p.getProperty("redlock.maxTtl")) != null) {
      builder.maxTtl(duration("redlock.maxTtl", v));
    }
    if ((v = p.getProperty("redlock.maxHold")) != null) {
      builder.maxHold(duration("redlock.maxHold", v));
    }
    if ((v = p.getProperty("redlock.taskInterruption")) != null) {
      try {
        builder.taskInterruption(TaskInterruption.valueOf(v.trim().toUpperCase(Locale.ROOT)));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "redlock.taskInterruption must be one of "
                + Arrays.toString(TaskInterruption.values())
                + ", was '"
                + v
                + "'");
      }
    }
    if ((v = p.getProperty("redlock.nodeTimeout")) != null) {
      builder.nodeTimeout(duration("redlock.nodeTimeout", v));
    }
    if ((v = p.getProperty("redlock.retryDelay")) != null) {
      builder.retryDelay(duration("redlock.retryDelay", v));
    }
    if ((v = p.getProperty("redlock.retryJitter")) != null) {
      builder.retryJitter(duration("redlock.retryJitter", v));
    }
    if ((v = p.getProperty("redlock.maxConnectionsPerNode")) != null) {
      builder.maxConnectionsPerNode(integer("redlock.maxConnectionsPerNode", v));
    }
    if ((v = p.getProperty("redlock.trustFsyncedAofRestarts")) != null) {
      builder.trustFsyncedAofRestarts(bool("redlock.trustFsyncedAofRestarts", v));
    }
    return builder.build();
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

  /** Parses {@code 50ms}, {@code 2s}, {@code 1m}, {@code 1h} or ISO-8601 ({@code PT0.05S}). */
  public static Duration duration(String key, String value) {
    String text = value.trim().toLowerCase(Locale.ROOT);
    Matcher m = SHORT_DURATION.matcher(text);
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
}
