package dev.redlock;

import dev.redlock.LockUnavailableException.Reason;
import dev.redlock.spi.LeaseStore;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/** An attempt's outcome: the lease, or why not and the account. */
final class Attempt<H extends LeaseStore.Held> {
  final ManagedLease<H> lease;
  final Reason reason;
  final LeaseStore.Vote<H> vote;
  final long elapsedNanos;
  final long validityLeftNanos;
  private final int nodes;
  private final int quorum;

  Attempt(
      ManagedLease<H> lease,
      Reason reason,
      LeaseStore.Vote<H> vote,
      long elapsedNanos,
      long validityLeftNanos,
      LeaseStore<H> store) {
    this.lease = lease;
    this.reason = reason;
    this.vote = vote;
    this.elapsedNanos = elapsedNanos;
    this.validityLeftNanos = validityLeftNanos;
    this.nodes = store.size();
    this.quorum = store.quorum();
  }

  /** The failure of an interrupted attempt on {@code what}, which rolled back. */
  static RedlockException interrupted(String what, InterruptedException e) {
    return new RedlockException(
        "interrupted while acquiring " + what + "; nothing is held (what was sent is rolled back)",
        e);
  }

  /** Yes votes that came after the decision (rolled back): said, so the account adds up. */
  private String lateYes() {
    int late = vote.tally().yes() - vote.yes();
    return late > 0 ? " (" + late + " more said yes after the decision, rolled back)" : "";
  }

  LockUnavailableException failure(String resource, int attempts, long waitedNanos) {
    String why =
        switch (reason) {
          case HELD_ELSEWHERE -> "held elsewhere";
          case QUORUM_UNREACHABLE -> "quorum unreachable";
          case VALIDITY_EXPIRED -> "validity expired before the quorum was counted";
        };
    List<NodeOutcome> outcomes = vote.tally().outcomes();
    String message =
        String.format(
            Locale.ROOT,
            "could not acquire '%s' (%s) after %d attempt(s) in %d ms: last attempt won %d of %d nodes (quorum %d) in %.1f ms%s,"
                + " validity left %d ms; nodes: %s",
            resource,
            why,
            attempts,
            TimeUnit.NANOSECONDS.toMillis(waitedNanos),
            vote.yes(),
            nodes,
            quorum,
            elapsedNanos / 1e6,
            lateYes(),
            TimeUnit.NANOSECONDS.toMillis(validityLeftNanos),
            outcomes);
    if (reason == Reason.QUORUM_UNREACHABLE
        && outcomes.stream().anyMatch(o -> o.status() == NodeOutcome.Status.QUARANTINED)) {
      message +=
          "; quarantined nodes vote again at the time each shows; if they are new and never"
              + " served a lock, 'redlock init-nodes' lets them vote now";
    }
    LockUnavailableException e =
        new LockUnavailableException(message, resource, reason, attempts, outcomes);
    vote.tally().errors().forEach(e::addSuppressed);
    return e;
  }
}
