package dev.redlock.jdbc;

import dev.redlock.NodeOutcome;
import dev.redlock.spi.Tally;
import java.util.List;

/** The account of a request to one database: yes or not, and what it answered. */
record SingleAnswer(boolean won, NodeOutcome outcome, Throwable error) implements Tally {
  @Override
  public int yes() {
    return won ? 1 : 0;
  }

  @Override
  public int size() {
    return 1;
  }

  @Override
  public List<NodeOutcome> outcomes() {
    return List.of(outcome);
  }

  @Override
  public List<Throwable> errors() {
    return error == null ? List.of() : List.of(error);
  }
}
