package dev.redlock;

import java.util.concurrent.TimeUnit;

/**
 * Whether, and for how long, a writer's refused attempt on a read-write lock leaves its intent
 * mark, which keeps new readers out so that a stream of them cannot starve the writer.
 */
enum WriterIntent {
  /** No mark: a writer that will not ask again. */
  NONE,
  /** Until its next attempt: it waits with no deadline. */
  UNTIL_NEXT_ASK,
  /** Until its next attempt, or its give-up time if that comes first. */
  UNTIL_NEXT_ASK_OR_GIVE_UP;

  /**
   * How long the mark keeps new readers out: until the writer's next attempt, within a retry pause
   * and a round of {@code start}; not past {@code giveUpAt} (and a round) for {@link
   * #UNTIL_NEXT_ASK_OR_GIVE_UP}; plus this attempt's own wait for a turn ({@code start - askedAt})
   * for {@link #UNTIL_NEXT_ASK}, whose next turn may take as long. At most the ttl.
   *
   * @param longestPauseNanos the retry delay and all of its jitter
   * @param roundNanos one round of votes: the node timeout
   */
  long millis(
      long ttlMillis,
      long giveUpAt,
      long askedAt,
      long start,
      long longestPauseNanos,
      long roundNanos) {
    if (this == NONE) {
      return 0;
    }
    long next = longestPauseNanos + 2 * roundNanos;
    long left =
        this == UNTIL_NEXT_ASK
            ? next + (start - askedAt)
            : Math.min(next, Math.max(0, giveUpAt - start) + roundNanos);
    return Math.min(ttlMillis, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
  }
}
