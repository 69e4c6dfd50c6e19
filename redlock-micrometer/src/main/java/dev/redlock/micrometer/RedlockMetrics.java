package dev.redlock.micrometer;

import dev.redlock.LeaseLostException;
import dev.redlock.LockEvent;
import dev.redlock.NodeOutcome;
import dev.redlock.RedlockListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link RedlockListener} that turns lock events into Micrometer meters:
 *
 * <ul>
 *   <li>{@code redlock.acquire} (timer, with a percentile histogram): every acquisition attempt's
 *       duration, tagged {@code outcome} = {@code acquired}, {@code held_elsewhere}, {@code
 *       quorum_unreachable} or {@code validity_expired}; its count is the number of attempts by
 *       outcome;
 *   <li>{@code redlock.node.latency} (timer) and {@code redlock.node.errors} (counter), tagged
 *       {@code node} (and {@code status}: {@code failed} or {@code timed_out}): each node's answers
 *       in acquisition attempts;
 *   <li>{@code redlock.nodes.quarantined} (gauge): nodes the restart guard kept out of the last
 *       attempt they were asked in;
 *   <li>{@code redlock.leases.held} (gauge): leases held now;
 *   <li>{@code redlock.leases.extended} (counter) and {@code redlock.leases.lost} (counter, tagged
 *       {@code reason}: {@code renewal_failed}, {@code expired}, {@code max_hold_reached}; each
 *       registered at zero when the listener is made, so an alert has a series from the start).
 * </ul>
 *
 * <p>Resources are never tags (their number is unbounded); nodes are.
 *
 * <pre>{@code
 * RedlockConfig config = RedlockConfig.builder()
 *     .nodes(uris)
 *     .listener(new RedlockMetrics(meterRegistry))
 *     .build();
 * }</pre>
 */
public final class RedlockMetrics implements RedlockListener {
  private final MeterRegistry registry;
  private final Map<String, Timer> acquire = new ConcurrentHashMap<>();
  private final Map<String, Timer> nodeLatency = new ConcurrentHashMap<>();
  private final Map<String, Counter> nodeErrors = new ConcurrentHashMap<>();
  private final Map<String, Counter> lost = new ConcurrentHashMap<>();
  private final Set<String> quarantined = ConcurrentHashMap.newKeySet();
  private final Set<String> held = ConcurrentHashMap.newKeySet();
  private final Counter extended;

  /**
   * Registers the gauges on {@code registry} and creates the other meters as events come.
   *
   * @throws NullPointerException if {@code registry} is null
   */
  public RedlockMetrics(MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry must not be null");
    Gauge.builder("redlock.leases.held", held, Set::size)
        .description("Leases held now")
        .register(registry);
    Gauge.builder("redlock.nodes.quarantined", quarantined, Set::size)
        .description("Nodes the restart guard kept out of their last attempt")
        .register(registry);
    this.extended =
        Counter.builder("redlock.leases.extended")
            .description("Leases extended, by extend() or renewal")
            .register(registry);
    // At zero from the start, so that an alert on a loss has a series to read before the first.
    for (LeaseLostException.Reason reason : LeaseLostException.Reason.values()) {
      lost.put(tag(reason.name()), lostCounter(tag(reason.name())));
    }
  }

  private Counter lostCounter(String reason) {
    return Counter.builder("redlock.leases.lost")
        .description("Leases lost while held")
        .tag("reason", reason)
        .register(registry);
  }

  @Override
  public void onEvent(LockEvent event) {
    switch (event.kind()) {
      case ACQUIRED -> {
        held.add(event.owner());
        attempt("acquired", event);
      }
      case FAILED -> attempt(tag(event.reason()), event);
      case EXTENDED -> extended.increment();
      case LOST -> {
        held.remove(event.owner());
        lost.computeIfAbsent(tag(event.reason()), this::lostCounter).increment();
      }
      case RELEASED -> held.remove(event.owner());
      case ATTEMPT -> {}
    }
  }

  private void attempt(String outcome, LockEvent event) {
    acquire
        .computeIfAbsent(
            outcome,
            o ->
                Timer.builder("redlock.acquire")
                    .description("Acquisition attempts, by outcome")
                    .tag("outcome", o)
                    .publishPercentileHistogram()
                    .register(registry))
        .record(event.elapsed());
    for (NodeOutcome node : event.nodeOutcomes()) {
      switch (node.status()) {
        case OK, REFUSED -> {
          quarantined.remove(node.node());
          nodeLatency
              .computeIfAbsent(
                  node.node(),
                  n ->
                      Timer.builder("redlock.node.latency")
                          .description("How long a node took to answer an acquisition")
                          .tag("node", n)
                          .register(registry))
              .record(node.latency());
        }
        case FAILED, TIMED_OUT -> {
          quarantined.remove(node.node());
          String status = tag(node.status().name());
          nodeErrors
              .computeIfAbsent(
                  node.node() + " " + status,
                  k ->
                      Counter.builder("redlock.node.errors")
                          .description(
                              "Acquisition requests a node failed or did not answer in time")
                          .tag("node", node.node())
                          .tag("status", status)
                          .register(registry))
              .increment();
        }
        case QUARANTINED -> quarantined.add(node.node());
        case PENDING, SKIPPED -> {}
      }
    }
  }

  private static String tag(String name) {
    return name == null ? "unknown" : name.toLowerCase(Locale.ROOT);
  }
}
