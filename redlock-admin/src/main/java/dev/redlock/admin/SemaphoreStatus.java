package dev.redlock.admin;

import java.util.List;
import java.util.Objects;

/**
 * What the nodes say about a semaphore's permits right now, from {@link
 * RedlockAdmin#semaphoreStatus(String, int)}: permit {@code i} is the plain lock of the resource
 * {@code name@permit:i} ({@link dev.redlock.Semaphore#permitResource}), so each permit's view is
 * that lock's {@link LockStatus}.
 *
 * @param name the semaphore's name, as given to {@link dev.redlock.Redlock#semaphore}
 * @param permits each permit's status, permit 0 first: as many as the number of permits asked about
 * @param heldBeyond the permits at or past the number asked about, up to {@link
 *     dev.redlock.Semaphore#MAX_PERMITS}, whose lock key some node holds, in order: clients that
 *     take this semaphore with more permits than were asked about (its real bound is theirs). They
 *     are not in {@link #permits()} nor counted by {@link #held()}; ask again with the number the
 *     clients use. Empty when none.
 */
public record SemaphoreStatus(String name, List<LockStatus> permits, List<Integer> heldBeyond) {
  public SemaphoreStatus {
    Objects.requireNonNull(name, "name must not be null");
    permits = List.copyOf(Objects.requireNonNull(permits, "permits must not be null"));
    heldBeyond = List.copyOf(Objects.requireNonNull(heldBeyond, "heldBeyond must not be null"));
  }

  /** A status with nothing held beyond the permits asked about. */
  public SemaphoreStatus(String name, List<LockStatus> permits) {
    this(name, permits, List.of());
  }

  /**
   * How many permits a quorum holds ({@link LockStatus.Verdict#HELD}): the permits valid now. An
   * {@link LockStatus.Verdict#UNDECIDED} permit is not counted, nor can it be granted until its
   * keys expire or its nodes come back.
   */
  public int held() {
    return (int) permits.stream().filter(p -> p.verdict() == LockStatus.Verdict.HELD).count();
  }
}
