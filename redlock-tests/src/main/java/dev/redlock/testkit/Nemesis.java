package dev.redlock.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a random schedule of faults to {@link FaultyNodes} from a seed — print it: the same seed
 * replays the same sequence of choices — never more than {@code maxFaulty} nodes at once, each
 * fault lasting 50–300 ms. Runs on its own thread until {@link #close()}, which heals every node.
 * Each fault is logged with its time.
 *
 * <pre>{@code
 * try (Nemesis nemesis = Nemesis.builder(nodes).seed(seed).maxFaulty(2).start()) {
 *   ... run clients ...
 * }
 * }</pre>
 */
public final class Nemesis implements AutoCloseable {
  private static final Logger faults = LoggerFactory.getLogger("dev.redlock.testkit.faults");

  /** The faults a nemesis draws from. */
  public enum Fault {
    /** SIGSTOP, SIGCONT when the fault ends. */
    FREEZE_PROCESS,
    /** SIGKILL, then a restart with the nemesis's {@link Persistence}. */
    KILL_RESTART,
    /** Every link to the node closed and refused. */
    CUT_LINK,
    /** Every link to the node frozen: nothing passes, connections stay open. */
    FREEZE_LINK,
    /** Every request to the node delayed by 20–120 ms. */
    SLOW_LINK,
    /**
     * Some clients (with links of their own, {@link FaultyNodes#uris(String)}) cut off the node
     * while the others still reach it.
     */
    PARTITION
  }

  private final FaultyNodes nodes;
  private final long seed;
  private final Random random;
  private final int maxFaulty;
  private final Persistence restartWith;
  private final List<Fault> kinds;
  private final List<String> log = new CopyOnWriteArrayList<>();
  private final AtomicInteger applied = new AtomicInteger();
  private final Thread thread;
  private volatile boolean running = true;

  private Nemesis(Builder b) {
    this.nodes = b.nodes;
    this.seed = b.seed;
    this.random = new Random(b.seed);
    this.maxFaulty = b.maxFaulty;
    this.restartWith = b.restartWith;
    this.kinds = List.copyOf(b.faults);
    this.thread = new Thread(this::run, "nemesis-" + b.seed);
    this.thread.setDaemon(true);
  }

  /** Starts describing a nemesis over {@code nodes}. */
  public static Builder builder(FaultyNodes nodes) {
    return new Builder(nodes);
  }

  /** Options of a {@link Nemesis}. */
  public static final class Builder {
    private final FaultyNodes nodes;
    private long seed = System.nanoTime();
    private int maxFaulty = 1;
    private Persistence restartWith;
    private Set<Fault> faults = EnumSet.allOf(Fault.class);

    private Builder(FaultyNodes nodes) {
      if (nodes == null) {
        throw new IllegalArgumentException("nodes must not be null");
      }
      this.nodes = nodes;
      this.restartWith = nodes.persistence();
    }

    /** The seed of the schedule (default: the current nano time). */
    public Builder seed(long seed) {
      this.seed = seed;
      return this;
    }

    /** At most this many nodes faulty at once (default 1; a minority, for the safe suites). */
    public Builder maxFaulty(int maxFaulty) {
      if (maxFaulty < 1 || maxFaulty > nodes.size()) {
        throw new IllegalArgumentException(
            "maxFaulty must be 1.." + nodes.size() + ", was " + maxFaulty);
      }
      this.maxFaulty = maxFaulty;
      return this;
    }

    /**
     * How a killed node comes back (default: the nodes' own persistence). {@link Persistence#NONE}
     * brings it back empty, so the restart guard keeps it out of votes for {@code maxTtl}.
     */
    public Builder restartWith(Persistence restartWith) {
      if (restartWith == null) {
        throw new IllegalArgumentException("restartWith must not be null");
      }
      this.restartWith = restartWith;
      return this;
    }

    /** The faults to draw from (default: all). */
    public Builder faults(Set<Fault> faults) {
      if (faults == null || faults.isEmpty()) {
        throw new IllegalArgumentException("faults must not be empty");
      }
      this.faults = EnumSet.copyOf(faults);
      return this;
    }

    /** Starts the nemesis's thread. */
    public Nemesis start() {
      if (faults.equals(EnumSet.of(Fault.PARTITION)) && nodes.clients().isEmpty()) {
        throw new IllegalStateException(
            "PARTITION needs clients with links of their own: call nodes.uris(client) first");
      }
      Nemesis nemesis = new Nemesis(this);
      nemesis.note("start seed=" + seed + " maxFaulty=" + maxFaulty + " faults=" + faults);
      nemesis.thread.start();
      return nemesis;
    }
  }

  /** The seed of this schedule. */
  public long seed() {
    return seed;
  }

  /** The faults applied so far, in order, with their times. */
  public List<String> log() {
    return List.copyOf(log);
  }

  /** How many faults were applied so far. */
  public int applied() {
    return applied.get();
  }

  private void run() {
    Map<Integer, Long> healAt = new HashMap<>();
    try {
      while (running) {
        long now = System.nanoTime();
        for (Integer node : new ArrayList<>(healAt.keySet())) {
          if (healAt.get(node) <= now) {
            heal(node);
            healAt.remove(node);
          }
        }
        if (healAt.size() < maxFaulty) {
          int victim = random.nextInt(nodes.size());
          Fault fault = kinds.get(random.nextInt(kinds.size()));
          if (!healAt.containsKey(victim) && apply(fault, victim)) {
            applied.incrementAndGet();
            healAt.put(victim, now + TimeUnit.MILLISECONDS.toNanos(50 + random.nextInt(250)));
          }
        }
        // The schedule's own rhythm, not a wait for a result.
        TimeUnit.MILLISECONDS.sleep(20 + random.nextInt(60));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private boolean apply(Fault fault, int victim) {
    RedisNode node = nodes.node(victim);
    switch (fault) {
      case FREEZE_PROCESS -> node.pause();
      case KILL_RESTART -> {
        node.kill();
        node.restart(restartWith);
      }
      case CUT_LINK -> nodes.cut(victim);
      case FREEZE_LINK -> nodes.freezeLink(victim);
      case SLOW_LINK -> {
        int millis = 20 + random.nextInt(100);
        nodes.latency(victim, Duration.ofMillis(millis));
        note(fault + " +" + millis + "ms " + victim);
        return true;
      }
      case PARTITION -> {
        List<String> clients = new ArrayList<>(nodes.clients());
        if (clients.isEmpty()) {
          return false;
        }
        Set<String> cutOff = new TreeSet<>();
        for (String client : clients) {
          if (random.nextBoolean()) {
            cutOff.add(client);
          }
        }
        if (cutOff.isEmpty()) {
          cutOff.add(clients.get(random.nextInt(clients.size())));
        }
        nodes.partition(cutOff, Set.of(victim));
        note(fault + " " + cutOff + " from " + victim);
        return true;
      }
    }
    note(fault + (fault == Fault.KILL_RESTART ? "(" + restartWith + ") " : " ") + victim);
    return true;
  }

  private void heal(int victim) {
    RedisNode node = nodes.node(victim);
    if (node.isPaused()) {
      node.resume();
    }
    nodes.restoreLinks(victim);
    note("heal " + victim);
  }

  private void note(String fault) {
    String line = System.nanoTime() + " " + fault;
    log.add(line);
    faults.info("nemesis: {}", line);
  }

  /**
   * Stops the schedule and heals every node: links restored, paused nodes resumed, killed nodes
   * restarted with the nemesis's persistence.
   */
  @Override
  public void close() {
    running = false; // the loop ends within one step (a sleep of at most 80 ms, or one restart)
    try {
      thread.join(Duration.ofSeconds(30).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    nodes.restoreLinks();
    nodes.nodes().heal(restartWith);
  }
}
