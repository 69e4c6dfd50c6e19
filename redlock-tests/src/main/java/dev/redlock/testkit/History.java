package dev.redlock.testkit;

import dev.redlock.Lease;
import dev.redlock.Semaphore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the clients of a fault test did, in order, with timestamps from one monotonic clock (all
 * clients run in this JVM): the material {@link HistoryChecker} judges. Thread-safe.
 *
 * <pre>{@code
 * redlock.withLock("payout:42", ttl, maxWait, lease -> {
 *   history.granted("worker-1", lease);
 *   pay(invoice, lease.fencingToken());
 *   history.released("worker-1", lease);
 *   return null;
 * });
 * List<String> problems = HistoryChecker.violations(history);
 * }</pre>
 */
public final class History {
  /** What a client did. */
  public enum Op {
    /**
     * Acquired a lease: {@code at} is when acquire returned, {@code validUntil} when the lease
     * ends.
     */
    GRANT,
    /** Wrote to the protected resource with its fencing token: accepted, refused or unknown. */
    WRITE,
    /** Looked at its lease and found it valid. */
    VALID,
    /** Released its lease: {@code at} is when release was called. */
    RELEASE,
    /**
     * Acquired a read lease of a read-write lock (its resource is the lock's name): as {@link
     * #GRANT}, but shared with other read grants; a {@link #GRANT} of that name is a write lease.
     */
    READ_GRANT
  }

  /** How an operation ended. */
  public enum Outcome {
    OK,
    REFUSED,
    UNKNOWN
  }

  /**
   * One event.
   *
   * @param seq order of recording
   * @param client who
   * @param resource what
   * @param op what was done
   * @param outcome how it ended
   * @param at when (System.nanoTime)
   * @param validUntil for GRANT, when the lease's validity ends (System.nanoTime); else 0
   * @param token the fencing token involved
   */
  public record Event(
      long seq,
      String client,
      String resource,
      Op op,
      Outcome outcome,
      long at,
      long validUntil,
      long token) {
    @Override
    public String toString() {
      return "#"
          + seq
          + " "
          + client
          + " "
          + op
          + " "
          + outcome
          + " '"
          + resource
          + "' at "
          + at
          + (validUntil == 0 ? "" : " validUntil " + validUntil)
          + (token == 0 ? "" : " token " + token);
    }
  }

  private final List<Event> events = new ArrayList<>();

  /**
   * Records that {@code client} was granted {@code lease}, now: one grant per resource it locks (a
   * multi-resource lease is judged resource by resource, each with its own fencing token).
   */
  public void granted(String client, Lease lease) {
    long now = System.nanoTime();
    long validUntil = now + lease.remainingValidity().toNanos();
    for (String resource : lease.resources()) {
      record(client, resource, Op.GRANT, Outcome.OK, now, validUntil, lease.fencingToken(resource));
    }
  }

  /**
   * Records that {@code client} was granted the read lease {@code lease} of a read-write lock, now
   * ({@link Op#READ_GRANT}); record its write leases with {@link #granted}.
   */
  public void grantedRead(String client, Lease lease) {
    long now = System.nanoTime();
    long validUntil = now + lease.remainingValidity().toNanos();
    record(
        client, lease.resource(), Op.READ_GRANT, Outcome.OK, now, validUntil, lease.fencingToken());
  }

  /** Records that {@code client} checked {@code lease} and found it valid, now. */
  public void foundValid(String client, Lease lease) {
    long now = System.nanoTime();
    for (String resource : lease.resources()) {
      record(client, resource, Op.VALID, Outcome.OK, now, 0, lease.fencingToken(resource));
    }
  }

  /** Records a guarded write with {@code lease}'s token, now (one per resource it locks). */
  public void wrote(String client, Lease lease, Outcome outcome) {
    long now = System.nanoTime();
    for (String resource : lease.resources()) {
      record(client, resource, Op.WRITE, outcome, now, 0, lease.fencingToken(resource));
    }
  }

  /** Records that {@code client} released {@code lease}, now (call it before releasing). */
  public void released(String client, Lease lease) {
    long now = System.nanoTime();
    for (String resource : lease.resources()) {
      record(client, resource, Op.RELEASE, Outcome.OK, now, 0, lease.fencingToken(resource));
    }
  }

  /** Records an event now. */
  public void record(
      String client, String resource, Op op, Outcome outcome, long validUntil, long token) {
    record(client, resource, op, outcome, System.nanoTime(), validUntil, token);
  }

  /** Records an event that happened at {@code at}. */
  public synchronized void record(
      String client,
      String resource,
      Op op,
      Outcome outcome,
      long at,
      long validUntil,
      long token) {
    events.add(new Event(events.size() + 1, client, resource, op, outcome, at, validUntil, token));
  }

  /** Which semaphore each permit resource belongs to (see {@link #permitGranted}). */
  private final Map<String, String> semaphoreOfPermit = new HashMap<>();

  /** The most permits any client took a semaphore's permits with: the bound the checker holds. */
  private final Map<String, Integer> permitsOfSemaphore = new HashMap<>();

  /**
   * Records that {@code client} was granted {@code lease}, a permit of the semaphore {@code
   * semaphore}, now: the grant of its permit resource, as {@link #granted}, and that this resource
   * is one of the semaphore's, so the checker also holds the semaphore's valid permits to at most
   * the largest {@code permits} they were recorded with. Pass the number the test asked for, not
   * what the library reports ({@link Semaphore#permits()}): a semaphore that hands out more permits
   * than it was given may report its own wrong number, and the checker would then allow it.
   */
  public void permitGranted(String client, String semaphore, int permits, Lease lease) {
    declarePermit(lease.resource(), semaphore, permits);
    granted(client, lease);
  }

  /**
   * Declares {@code resource} a permit of {@code semaphore}, taken through a semaphore of {@code
   * permits} permits (for histories written by hand).
   */
  public synchronized void declarePermit(String resource, String semaphore, int permits) {
    semaphoreOfPermit.put(resource, semaphore);
    permitsOfSemaphore.merge(semaphore, permits, Math::max);
  }

  /** Each declared permit resource and its semaphore's name. */
  public synchronized Map<String, String> semaphoreOfPermit() {
    return Map.copyOf(semaphoreOfPermit);
  }

  /** Each semaphore's bound: the most permits any of its permits was taken through. */
  public synchronized Map<String, Integer> permitsOfSemaphore() {
    return Map.copyOf(permitsOfSemaphore);
  }

  /** A copy of every event, in recording order. */
  public synchronized List<Event> events() {
    return List.copyOf(events);
  }

  public synchronized int size() {
    return events.size();
  }
}
