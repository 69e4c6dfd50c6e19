package dev.redlock;

import java.util.List;
import java.util.Objects;

/**
 * What the nodes say about a semaphore's permits right now, from {@link
 * RedlockAdmin#semaphoreStatus(String, int)}: permit {@code i} is the plain lock of the resource
 * {@code name@permit:i} ({@link Semaphore#permitResource}), so each permit's view is that lock's
 * {@link LockStatus}.
 *
 * @param name the semaphore's name, as given to {@link LockService#semaphore}
 * @param permits each permit's status, permit 0 first: as many as the number of permits asked about
 */
public record SemaphoreStatus(String name, List<LockStatus> permits) {
  public SemaphoreStatus {
    Objects.requireNonNull(name, "name must not be null");
    permits = List.copyOf(Objects.requireNonNull(permits, "permits must not be null"));
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
