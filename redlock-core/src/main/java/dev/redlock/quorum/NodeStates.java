package dev.redlock.quorum;

import dev.redlock.NodeOutcome;
import dev.redlock.node.LockNode;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each node's standing as its requests show it, logged once per change: a node that stops voting
 * (down, refusing our credentials, timing out, quarantined by the restart guard) is a WARN the
 * first time, and its return an INFO, so that a minority failing is never silently absorbed by a
 * quorum that still forms, nor repeated on every attempt.
 */
final class NodeStates {
  private static final Logger log = LoggerFactory.getLogger(QuorumStore.class);

  private enum State {
    VOTES,
    FAILS,
    QUARANTINED
  }

  private final AtomicReferenceArray<State> states;
  private final int quorum;
  private final Duration maxTtl;

  NodeStates(int nodes, int quorum, Duration maxTtl) {
    this.states = new AtomicReferenceArray<>(nodes);
    for (int i = 0; i < nodes; i++) {
      states.set(i, State.VOTES);
    }
    this.quorum = quorum;
    this.maxTtl = maxTtl;
  }

  /**
   * What a request to node {@code node} came to, as a ballot records it: one volatile read unless
   * the node's standing changed. Any request shows a node failing or answering; only an acquisition
   * shows whether a quarantined node votes again (it answers a release all the same).
   */
  void record(
      int node, LockNode lockNode, NodeOutcome.Status status, String detail, boolean acquisition) {
    State now =
        switch (status) {
          case OK, REFUSED -> State.VOTES;
          case FAILED, TIMED_OUT -> State.FAILS;
          case QUARANTINED -> State.QUARANTINED;
          case PENDING, SKIPPED -> null; // not heard from
        };
    State was = states.get(node);
    if (now == null || was == now || (!acquisition && was == State.QUARANTINED)) {
      return;
    }
    State before = states.getAndSet(node, now);
    if (before == now) {
      return;
    }
    switch (now) { // the node's name is made only here
      case VOTES -> log.info("node {} votes again (it was {})", lockNode.name(), before);
      case FAILS ->
          log.warn(
              "node {} is not voting: {} ({}); a lock needs {} of {} nodes",
              lockNode.name(),
              status,
              detail,
              quorum,
              states.length());
      case QUARANTINED ->
          log.warn(
              "node {} is quarantined by the restart guard: {}. Its data may lack leases it granted"
                  + " (a restart from a snapshot or an AOF not fsynced on every write, a resync from"
                  + " a master, a reload, a restore, a flush, or a new node); it votes again maxTtl"
                  + " ({}) after that began. If it is new and never served a lock, 'redlock"
                  + " init-nodes' lets it vote now",
              lockNode.name(),
              detail,
              maxTtl);
    }
  }
}
