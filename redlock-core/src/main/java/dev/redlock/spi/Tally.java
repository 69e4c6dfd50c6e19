package dev.redlock.spi;

import dev.redlock.NodeOutcome;
import java.util.List;

/**
 * The account of one request to a lease store: how many said yes (so far), and what each node
 * answered. A ballot of every node for a Redis quorum; a single entry for a store with one server.
 */
public interface Tally {
  /** How many said yes so far (stragglers may still add to it). */
  int yes();

  /** How many were asked. */
  int size();

  /** What each answered, in order. */
  List<NodeOutcome> outcomes();

  /** The failures behind failed or timed-out answers, for suppressed exceptions. */
  List<Throwable> errors();
}
