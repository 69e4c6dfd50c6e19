package dev.redlock;

import dev.redlock.internal.Ballot;
import java.time.Duration;

/** A {@link Lease} won on a quorum of Redis nodes. Its monitor orders extend and release. */
final class QuorumLease implements Lease {
  private final Redlock redlock;
  private final String resource;
  private final String key;
  private final String token;
  /** The SET NX round: nodes that refused there never held our token and are skipped later. */
  private final Ballot setBallot;
  /** The latest request on this lease: the next one waits for it, node by node. */
  private Ballot lastBallot; // guarded by this
  private boolean released; // guarded by this
  private volatile long validUntil;

  QuorumLease(Redlock redlock, String resource, String key, String token, long validUntil, Ballot setBallot) {
    this.redlock = redlock;
    this.resource = resource;
    this.key = key;
    this.token = token;
    this.validUntil = validUntil;
    this.setBallot = setBallot;
    this.lastBallot = setBallot;
  }

  @Override
  public String resource() {
    return resource;
  }

  @Override
  public java.util.List<NodeOutcome> nodeOutcomes() {
    return setBallot.outcomes();
  }

  @Override
  public Duration remainingValidity() {
    return Duration.ofNanos(Math.max(0, validUntil - redlock.now()));
  }

  @Override
  public boolean isValid() {
    return validUntil - redlock.now() > 0;
  }

  @Override
  public synchronized boolean extend(Duration ttl) {
    if (released) {
      throw new IllegalStateException("lease on '" + resource + "' was released; acquire a new one");
    }
    if (!isValid()) {
      return false; // never extend an expired lease: another owner may hold the lock by now
    }
    return redlock.extend(this, ttl);
  }

  @Override
  public void release() {
    Ballot votes = beginRelease();
    if (votes != null) {
      redlock.awaitRelease(resource, votes, redlock.now() + redlock.nodeTimeoutNanos());
    }
  }

  @Override
  public void close() {
    release();
  }

  /** Marks the lease released and sends the release; null if it was released already. */
  synchronized Ballot beginRelease() {
    if (released) {
      return null;
    }
    released = true;
    validUntil = redlock.now(); // invalid from now on, whatever the nodes answer
    return redlock.sendRelease(this);
  }

  String key() {
    return key;
  }

  String token() {
    return token;
  }

  Ballot setBallot() {
    return setBallot;
  }

  synchronized Ballot lastBallot() {
    return lastBallot;
  }

  synchronized void lastBallot(Ballot ballot) {
    lastBallot = ballot;
  }

  void validUntil(long instant) {
    validUntil = instant;
  }

  @Override
  public String toString() {
    // Never the token: it is the only proof of ownership.
    return "Lease{resource='" + resource + "', remainingValidity=" + remainingValidity() + "}";
  }
}
