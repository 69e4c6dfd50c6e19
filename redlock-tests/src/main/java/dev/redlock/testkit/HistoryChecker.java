package dev.redlock.testkit;

import dev.redlock.testkit.History.Event;
import dev.redlock.testkit.History.Op;
import dev.redlock.testkit.History.Outcome;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Judges a {@link History}. It reports, each with the offending pair of events:
 *
 * <ul>
 *   <li>two holders of one resource whose lease windows overlap (a window runs from the grant to
 *       the earlier of its release and its validity's end);
 *   <li>a write accepted with a token older than one already accepted for that resource (writes of
 *       unknown outcome count as accepted: conservative);
 *   <li>a lease found valid after its validity had ended;
 *   <li>two successive grants of one resource whose fencing tokens do not increase;
 *   <li>more holders of a semaphore's permits at once than its permits (the largest number any of
 *       them was recorded with, {@link History#permitGranted}), each window as above.
 *   <li>writers not alone, for a read-write lock ({@link Op#READ_GRANT}s and {@link Op#GRANT}s of
 *       one name): a write lease's window overlapping a read lease's, or a write lease whose token
 *       is not larger than that of a read lease that ended before it began (and a read lease's not
 *       larger than that of a write lease that ended before it). Read leases may overlap each
 *       other; write leases among themselves are judged by the rules above.
 * </ul>
 */
public final class HistoryChecker {
  private HistoryChecker() {}

  /** Every violation found; empty when the history is safe. */
  public static List<String> violations(History history) {
    List<Event> events = history.events();
    List<String> found = new ArrayList<>();
    overlappingHolders(events, found);
    staleWrites(events, found);
    validAfterValidity(events, found);
    tokensInGrantOrder(events, found);
    tooManyPermitHolders(history, events, found);
    writersAlone(events, found);
    return found;
  }

  /**
   * A write lease of a read-write lock overlaps no read lease of it, and the tokens of the two
   * kinds follow their order: whichever ended first has the smaller token.
   */
  private static void writersAlone(List<Event> events, List<String> found) {
    Map<String, Long> releasedAt = new HashMap<>();
    for (Event e : events) {
      if (e.op() == Op.RELEASE) {
        releasedAt.merge(key(e), e.at(), Math::min);
      }
    }
    Map<String, List<Window>> reads = new HashMap<>();
    Map<String, List<Window>> writes = new HashMap<>();
    for (Event grant : events) {
      if ((grant.op() == Op.GRANT || grant.op() == Op.READ_GRANT)
          && grant.outcome() == Outcome.OK) {
        long end =
            Math.min(grant.validUntil(), releasedAt.getOrDefault(key(grant), Long.MAX_VALUE));
        (grant.op() == Op.READ_GRANT ? reads : writes)
            .computeIfAbsent(grant.resource(), r -> new ArrayList<>())
            .add(new Window(grant, end));
      }
    }
    for (Map.Entry<String, List<Window>> lock : reads.entrySet()) {
      for (Window write : writes.getOrDefault(lock.getKey(), List.of())) {
        for (Window read : lock.getValue()) {
          long writeAt = write.grant().at();
          long readAt = read.grant().at();
          if (readAt < write.end() && writeAt < read.end()) {
            found.add(
                "writer not alone: "
                    + write.grant()
                    + " (until "
                    + write.end()
                    + ") overlaps reader "
                    + read.grant()
                    + " (until "
                    + read.end()
                    + ")");
          } else if (read.end() <= writeAt && write.grant().token() <= read.grant().token()) {
            found.add(
                "write token not above an earlier read's: "
                    + read.grant()
                    + " then "
                    + write.grant());
          } else if (write.end() <= readAt && read.grant().token() <= write.grant().token()) {
            found.add(
                "read token not above an earlier write's: "
                    + write.grant()
                    + " then "
                    + read.grant());
          }
        }
      }
    }
  }

  private record Window(Event grant, long end) {}

  private static void overlappingHolders(List<Event> events, List<String> found) {
    Map<String, Long> releasedAt = new HashMap<>();
    for (Event e : events) {
      if (e.op() == Op.RELEASE) {
        releasedAt.merge(key(e), e.at(), Math::min);
      }
    }
    Map<String, List<Window>> byResource = new HashMap<>();
    for (Event grant : events) {
      if (grant.op() == Op.GRANT && grant.outcome() == Outcome.OK) {
        long end =
            Math.min(grant.validUntil(), releasedAt.getOrDefault(key(grant), Long.MAX_VALUE));
        byResource
            .computeIfAbsent(grant.resource(), r -> new ArrayList<>())
            .add(new Window(grant, end));
      }
    }
    for (List<Window> windows : byResource.values()) {
      windows.sort(Comparator.comparingLong(w -> w.grant().at()));
      for (int i = 1; i < windows.size(); i++) {
        Window earlier = windows.get(i - 1);
        Window later = windows.get(i);
        if (later.grant().at() < earlier.end()) {
          found.add(
              "overlapping holders: "
                  + earlier.grant()
                  + " (until "
                  + earlier.end()
                  + ") and "
                  + later.grant());
        }
      }
    }
  }

  private static void tokensInGrantOrder(List<Event> events, List<String> found) {
    Map<String, List<Event>> byResource = new HashMap<>();
    for (Event e : events) {
      if (e.op() == Op.GRANT && e.outcome() == Outcome.OK) {
        byResource.computeIfAbsent(e.resource(), r -> new ArrayList<>()).add(e);
      }
    }
    for (List<Event> grants : byResource.values()) {
      grants.sort(Comparator.comparingLong(Event::at));
      for (int i = 1; i < grants.size(); i++) {
        if (grants.get(i).token() <= grants.get(i - 1).token()) {
          found.add(
              "fencing token did not increase: " + grants.get(i - 1) + " then " + grants.get(i));
        }
      }
    }
  }

  private static void staleWrites(List<Event> events, List<String> found) {
    Map<String, Event> newest = new HashMap<>();
    List<Event> writes = new ArrayList<>();
    for (Event e : events) {
      if (e.op() == Op.WRITE && e.outcome() != Outcome.REFUSED) {
        writes.add(e);
      }
    }
    writes.sort(Comparator.comparingLong(Event::at));
    for (Event write : writes) {
      Event before = newest.get(write.resource());
      if (before != null && write.token() < before.token()) {
        found.add("stale write accepted: " + write + " after " + before);
      }
      if (before == null || write.token() > before.token()) {
        newest.put(write.resource(), write);
      }
    }
  }

  /** One lease: its holder, resource and token. */
  private static String key(Event e) {
    return e.client() + "/" + e.resource() + "/" + e.token();
  }

  private static void validAfterValidity(List<Event> events, List<String> found) {
    Map<String, Event> grants = new HashMap<>();
    for (Event e : events) {
      if ((e.op() == Op.GRANT || e.op() == Op.READ_GRANT) && e.outcome() == Outcome.OK) {
        grants.put(key(e), e);
      }
    }
    for (Event e : events) {
      if (e.op() == Op.VALID) {
        Event grant = grants.get(key(e));
        if (grant != null && e.at() > grant.validUntil()) {
          found.add("lease reported valid after its validity ended: " + e + " for " + grant);
        }
      }
    }
  }

  /**
   * The most holders of {@code semaphore}'s permits whose windows overlapped at one instant (a
   * window as for overlapping holders): what a run reached against the bound.
   */
  public static int mostPermitHoldersAtOnce(History history, String semaphore) {
    int most = 0;
    for (List<Window> overlap : permitOverlaps(history, history.events(), semaphore)) {
      most = Math.max(most, overlap.size());
    }
    return most;
  }

  private static void tooManyPermitHolders(
      History history, List<Event> events, List<String> found) {
    for (Map.Entry<String, Integer> semaphore : history.permitsOfSemaphore().entrySet()) {
      int permits = semaphore.getValue();
      for (List<Window> overlap : permitOverlaps(history, events, semaphore.getKey())) {
        if (overlap.size() > permits) {
          StringBuilder holders = new StringBuilder();
          for (Window w : overlap) {
            holders.append(holders.length() == 0 ? "" : ", ").append(w.grant());
          }
          found.add(
              "more than "
                  + permits
                  + " holders of semaphore '"
                  + semaphore.getKey()
                  + "' at once ("
                  + overlap.size()
                  + "): "
                  + holders);
        }
      }
    }
  }

  /**
   * For each grant of one of {@code semaphore}'s permits, the windows open at the instant it began
   * (itself included): every peak of holders at once starts at some grant.
   */
  private static List<List<Window>> permitOverlaps(
      History history, List<Event> events, String semaphore) {
    Map<String, String> semaphoreOf = history.semaphoreOfPermit();
    Map<String, Long> releasedAt = new HashMap<>();
    for (Event e : events) {
      if (e.op() == Op.RELEASE) {
        releasedAt.merge(key(e), e.at(), Math::min);
      }
    }
    List<Window> windows = new ArrayList<>();
    for (Event grant : events) {
      if (grant.op() == Op.GRANT
          && grant.outcome() == Outcome.OK
          && semaphore.equals(semaphoreOf.get(grant.resource()))) {
        long end =
            Math.min(grant.validUntil(), releasedAt.getOrDefault(key(grant), Long.MAX_VALUE));
        windows.add(new Window(grant, end));
      }
    }
    windows.sort(Comparator.comparingLong(w -> w.grant().at()));
    List<List<Window>> overlaps = new ArrayList<>();
    for (int i = 0; i < windows.size(); i++) {
      long at = windows.get(i).grant().at();
      List<Window> open = new ArrayList<>();
      for (int j = 0; j <= i; j++) {
        if (windows.get(j).end() > at) {
          open.add(windows.get(j));
        }
      }
      overlaps.add(open);
    }
    return overlaps;
  }
}
