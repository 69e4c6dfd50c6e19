package dev.redlock.quorum;

import dev.redlock.NodeOutcome;
import dev.redlock.node.NodeRequest;
import dev.redlock.node.NodeRequest.Verb;
import dev.redlock.spi.LeaseRequest;
import dev.redlock.spi.LeaseStore;
import java.util.List;

/**
 * A lease held on a quorum of nodes.
 *
 * <p>{@code setBallot} is the SET NX round: nodes that refused there never held our token and are
 * skipped later. {@code order} keeps the lease's later requests behind it, node by node.
 */
final class QuorumHeld implements LeaseStore.Held {
  final LeaseRequest request;
  final String key;
  final String[] keys; // null for a lease of one resource
  final long fencingToken;
  final Ballot setBallot;
  final RequestOrder order;

  QuorumHeld(
      LeaseRequest request,
      String key,
      String[] keys,
      long fencingToken,
      Ballot setBallot,
      RequestOrder order) {
    this.request = request;
    this.key = key;
    this.keys = keys;
    this.fencingToken = fencingToken;
    this.setBallot = setBallot;
    this.order = order;
  }

  @Override
  public LeaseRequest request() {
    return request;
  }

  /**
   * This lease's request of {@code verb}: about its one key, all of its keys at once, or its
   * read-write lock's keys on its side.
   */
  NodeRequest request(Verb verb, long argument) {
    return NodeRequest.of(verb, request.shape(), key, keys, request.token(), argument, 0);
  }

  @Override
  public long fencingToken() {
    return fencingToken;
  }

  @Override
  public List<NodeOutcome> outcomes() {
    return setBallot.outcomes();
  }
}
