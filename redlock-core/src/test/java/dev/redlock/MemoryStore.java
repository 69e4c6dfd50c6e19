package dev.redlock;

import dev.redlock.config.RedlockConfig;
import dev.redlock.spi.LeaseRequest;
import dev.redlock.spi.LeaseStore;
import dev.redlock.spi.Tally;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A lease store of one part in this JVM's memory, on its monotonic clock: enough of a store other
 * than Redis to see a {@link Redlock} over it ({@link RedlockConfig.Builder#store}) take, renew and
 * give back, and be closed with it.
 */
final class MemoryStore implements LeaseStore<MemoryStore.Row> {
  static final String NAME = "memory";

  record Row(LeaseRequest request, long fencingToken, List<NodeOutcome> outcomes)
      implements LeaseStore.Held {
    String resource() {
      return request.name();
    }

    String token() {
      return request.token();
    }
  }

  private record Entry(String token, long expiresNanos) {}

  private record Answer(boolean won, NodeOutcome outcome) implements Tally {
    @Override
    public int yes() {
      return won ? 1 : 0;
    }

    @Override
    public int size() {
      return 1;
    }

    @Override
    public List<NodeOutcome> outcomes() {
      return List.of(outcome);
    }

    @Override
    public List<Throwable> errors() {
      return List.of();
    }
  }

  private final Map<String, Entry> entries = new HashMap<>();
  private final Duration timeout;
  private long fencing;
  private volatile boolean closed;

  MemoryStore(Duration timeout) {
    this.timeout = timeout;
  }

  /** The timeout the store was made with: the config's {@code nodeTimeout}. */
  Duration timeout() {
    return timeout;
  }

  boolean isClosed() {
    return closed;
  }

  synchronized boolean holds(String resource) {
    Entry e = entries.get(resource);
    return e != null && e.expiresNanos - System.nanoTime() > 0;
  }

  @Override
  public int quorum() {
    return 1;
  }

  @Override
  public int size() {
    return 1;
  }

  @Override
  public void checkResource(String resource) {}

  @Override
  public synchronized Vote<Row> take(LeaseRequest request, long start) {
    if (request.shape() != LeaseRequest.Shape.ONE) {
      throw new UnsupportedOperationException("the memory store takes one resource at a time");
    }
    String resource = request.name();
    if (holds(resource)) {
      return new Vote<>(null, 0, answer(false, "held by another owner"));
    }
    entries.put(resource, new Entry(request.token(), expiry(request.ttlMillis())));
    Answer yes = answer(true, "");
    return new Vote<>(new Row(request, ++fencing, yes.outcomes()), 1, yes);
  }

  @Override
  public synchronized Tally renew(Row held, long ttlMillis) {
    Entry e = entries.get(held.resource());
    boolean ours = e != null && e.token.equals(held.token()) && holds(held.resource());
    if (ours) {
      entries.put(held.resource(), new Entry(held.token(), expiry(ttlMillis)));
    }
    return answer(ours, ours ? "" : "not ours");
  }

  @Override
  public synchronized void giveBack(Row held) {
    Entry e = entries.get(held.resource());
    if (e != null && e.token.equals(held.token())) {
      entries.remove(held.resource());
    }
  }

  @Override
  public void giveBackAll(List<Row> held) {
    held.forEach(this::giveBack);
  }

  @Override
  public void close() {
    closed = true;
  }

  private static long expiry(long ttlMillis) {
    return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
  }

  private static Answer answer(boolean won, String detail) {
    return new Answer(
        won,
        new NodeOutcome(
            NAME, won ? NodeOutcome.Status.OK : NodeOutcome.Status.REFUSED, detail, Duration.ZERO));
  }
}
