package dev.redlock.jdbc;

import java.util.regex.Pattern;

/**
 * A lease table's name, checked (it goes into SQL text, so only plain identifiers), with the names
 * of its sequence and index.
 *
 * @param name the table, possibly schema-qualified: {@code redlock_leases}, {@code ops.leases}
 */
record Table(String name) {
  private static final Pattern IDENTIFIER =
      Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,47}(\\.[A-Za-z_][A-Za-z0-9_]{0,47})?");

  Table {
    if (name == null || !IDENTIFIER.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "table must be a plain SQL identifier, optionally schema-qualified (letters, digits,"
              + " '_', at most 48 each), was "
              + (name == null ? "null" : "'" + name + "'"));
    }
  }

  /** The table without its schema. */
  String simpleName() {
    int dot = name.indexOf('.');
    return dot < 0 ? name : name.substring(dot + 1);
  }

  /** The sequence the fencing tokens come from: {@code <table>_fence}, in the table's schema. */
  String sequence() {
    return name + "_fence";
  }
}
