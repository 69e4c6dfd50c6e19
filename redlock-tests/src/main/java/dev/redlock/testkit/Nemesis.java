package dev.redlock.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * <p>By default it draws the process and network faults ({@link Fault#processAndNetwork()}); the
 * faults that bring a node back with older data or an older clock ({@link Fault#staleData()}, issue
 * 12) are drawn when asked for with {@link Builder#faults(Set)}. Those that need time to pass
 * between two steps (a snapshot, then a restart from it) keep their node faulty from the first step
 * until 50–300 ms after the second.
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
    PARTITION,
    /**
     * A snapshot of the node now ({@link RedisNode#snapshot()}); when the fault's 50–300 ms are
     * over, grants having happened meanwhile, a restart from it ({@link
     * RedisNode#restartFrom(Snapshot)}): the node comes back in a new process without the writes
     * since.
     */
    RESTART_FROM_SNAPSHOT,
    /**
     * A snapshot of another running node of the same Redis version (of this one if there is none);
     * 50–300 ms later it is restored onto this node ({@link RedisNode#restoreBackup(Snapshot)}),
     * which comes back in a new process with the other node's data, life marker included.
     */
    RESTORE_BACKUP,
    /**
     * On an {@link Persistence#AOF_EVERYSEC} node only (others are passed over): the AOF is marked
     * ({@link RedisNode#markAof()}); 50–300 ms later the node restarts having lost every write
     * after the mark ({@link RedisNode#restartLosingAofTail(AofMark)}), as a crash of its machine
     * would.
     */
    AOF_LOST_TAIL,
    /**
     * A restart (with the nemesis's {@link Persistence}) with the node's clock stepped back by 100
     * ms or more at boot ({@link RedisNode#restart(Persistence, java.time.Duration)}), never
     * further than {@link Builder#maxClockStep(Duration)} behind real time in all. Only on nodes
     * whose binary accepts libfaketime ({@link RedisBinary#acceptsFakeClock()}: the Redis 6.2
     * binary, not Debian's 7.0); others are passed over. The clock stays stepped until the node's
     * next step.
     */
    CLOCK_STEP_AT_BOOT,
    /**
     * The server stalls for 50–300 ms while its process runs ({@link RedisNode#stall}, {@code DEBUG
     * SLEEP}): requests it read just before are answered after the clients gave up on them; its
     * clock and key expiry go on meanwhile. Drawn when asked for ({@link #callerSide()}).
     */
    STALL_SERVER;

    /**
     * The process and network faults, {@link #FREEZE_PROCESS} to {@link #PARTITION}: what a nemesis
     * draws by default.
     */
    public static Set<Fault> processAndNetwork() {
      return EnumSet.range(FREEZE_PROCESS, PARTITION);
    }

    /**
     * The faults that bring a node back with older data or an older clock: {@link
     * #RESTART_FROM_SNAPSHOT}, {@link #RESTORE_BACKUP}, {@link #AOF_LOST_TAIL}, {@link
     * #CLOCK_STEP_AT_BOOT}.
     */
    public static Set<Fault> staleData() {
      return EnumSet.range(RESTART_FROM_SNAPSHOT, CLOCK_STEP_AT_BOOT);
    }

    /**
     * The process and network faults and {@link #STALL_SERVER}: with a workload's caller faults
     * ({@link Workload.Builder#callerFaults}), what the randomized suite runs.
     */
    public static Set<Fault> callerSide() {
      Set<Fault> faults = processAndNetwork();
      faults.add(STALL_SERVER);
      return faults;
    }
  }

  /** The second step of a two-step fault, run when its first step's time is over. */
  private record Staged(String description, Runnable step, long holdNanos) {}

  private static final Duration MIN_CLOCK_STEP = Duration.ofMillis(100);

  private final FaultyNodes nodes;
  private final long seed;
  private final Random random;
  private final int maxFaulty;
  private final Persistence restartWith;
  private final Duration maxClockStep;
  private final List<Fault> kinds;
  private final Map<Integer, Staged> staged = new HashMap<>();
  private volatile RuntimeException failure;
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
    this.maxClockStep = b.maxClockStep;
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
    private Duration maxClockStep = Duration.ofSeconds(2);
    private Set<Fault> faults = Fault.processAndNetwork();

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

    /**
     * At most this many nodes faulty at once (default 1; a minority, for the safe suites). More
     * than half the nodes is allowed, for the suites that show what a faulty majority does.
     *
     * @throws IllegalArgumentException unless 1 &le; {@code maxFaulty} &le; the number of nodes
     */
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

    /**
     * How far behind real time {@link Fault#CLOCK_STEP_AT_BOOT} may set a node's clock, in all
     * (default 2 s). Keep it below the clients' {@code maxTtl}: the lock's fencing tokens only
     * promise to grow while no clock steps back by more than that.
     *
     * @throws IllegalArgumentException if it is null or under 100 ms
     */
    public Builder maxClockStep(Duration maxClockStep) {
      if (maxClockStep == null || maxClockStep.compareTo(MIN_CLOCK_STEP) < 0) {
        throw new IllegalArgumentException(
            "maxClockStep must be >= " + MIN_CLOCK_STEP + ", was " + maxClockStep);
      }
      this.maxClockStep = maxClockStep;
      return this;
    }

    /**
     * The faults to draw from (default: {@link Fault#processAndNetwork()}).
     *
     * @throws IllegalArgumentException if {@code faults} is null or empty
     */
    public Builder faults(Set<Fault> faults) {
      if (faults == null || faults.isEmpty()) {
        throw new IllegalArgumentException("faults must not be empty");
      }
      this.faults = EnumSet.copyOf(faults);
      return this;
    }

    /**
     * Starts the nemesis's thread.
     *
     * @throws IllegalStateException if a fault asked for can apply to none of the nodes: {@link
     *     Fault#PARTITION} alone without clients with links of their own, {@link
     *     Fault#AOF_LOST_TAIL} without an {@link Persistence#AOF_EVERYSEC} node, {@link
     *     Fault#CLOCK_STEP_AT_BOOT} without a binary that accepts libfaketime
     * @throws MissingToolException if {@link Fault#CLOCK_STEP_AT_BOOT} is asked for and libfaketime
     *     is not installed
     */
    public Nemesis start() {
      if (faults.equals(EnumSet.of(Fault.PARTITION)) && nodes.clients().isEmpty()) {
        throw new IllegalStateException(
            "PARTITION needs clients with links of their own: call nodes.uris(client) first");
      }
      List<RedisNode> all = nodes.nodes().all();
      if (faults.contains(Fault.AOF_LOST_TAIL)
          && all.stream().noneMatch(n -> n.persistence() == Persistence.AOF_EVERYSEC)) {
        throw new IllegalStateException(
            "AOF_LOST_TAIL needs AOF_EVERYSEC nodes (appendfsync always loses no acknowledged"
                + " write); the nodes are "
                + nodes.persistence());
      }
      if (faults.contains(Fault.CLOCK_STEP_AT_BOOT)
          && all.stream().noneMatch(n -> n.binary().acceptsFakeClock())) {
        throw new IllegalStateException(
            "CLOCK_STEP_AT_BOOT needs nodes whose binary accepts libfaketime: start them on"
                + " RedisBinary.embedded() (RedisFixture.nodes(n).binary(RedisBinary::embedded)); "
                + all.get(0).binary().path()
                + " does not");
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

  /**
   * What stopped the schedule early, if anything did (a node that did not come back from a fault,
   * for instance): the nemesis logs it and applies no more faults.
   */
  public Optional<RuntimeException> failure() {
    return Optional.ofNullable(failure);
  }

  private void run() {
    Map<Integer, Long> healAt = new HashMap<>();
    try {
      while (running) {
        long now = System.nanoTime();
        for (Integer node : new ArrayList<>(healAt.keySet())) {
          if (healAt.get(node) <= now) {
            Staged next = staged.remove(node);
            if (next == null) {
              heal(node);
              healAt.remove(node);
            } else {
              next.step().run();
              note(next.description());
              healAt.put(node, System.nanoTime() + next.holdNanos());
            }
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
    } catch (RuntimeException e) {
      failure = e;
      faults.error("nemesis {} stopped: {}", seed, e.toString(), e);
    }
  }

  /** How long a two-step fault keeps its node after its second step: drawn with the first. */
  private long drawHold() {
    return TimeUnit.MILLISECONDS.toNanos(50 + random.nextInt(250));
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
      case RESTART_FROM_SNAPSHOT -> {
        Snapshot snapshot = node.snapshot();
        staged.put(
            victim,
            new Staged(
                fault + " restarted from its snapshot " + victim,
                () -> node.restartFrom(snapshot),
                drawHold()));
        note(fault + " snapshot taken " + victim);
        return true;
      }
      case RESTORE_BACKUP -> {
        List<Integer> donors = new ArrayList<>();
        for (int i = 0; i < nodes.size(); i++) {
          RedisNode other = nodes.node(i);
          if (i != victim
              && other.isRunning()
              && !other.isPaused()
              && other.binary().version().equals(node.binary().version())) {
            donors.add(i);
          }
        }
        int donor = donors.isEmpty() ? victim : donors.get(random.nextInt(donors.size()));
        Snapshot backup = nodes.node(donor).snapshot();
        staged.put(
            victim,
            new Staged(
                fault + " restored the backup of " + donor + " onto " + victim,
                () -> node.restoreBackup(backup),
                drawHold()));
        note(fault + " backup taken of " + donor + " for " + victim);
        return true;
      }
      case AOF_LOST_TAIL -> {
        if (node.persistence() != Persistence.AOF_EVERYSEC) {
          return false;
        }
        AofMark mark = node.markAof();
        staged.put(
            victim,
            new Staged(
                fault + " restarted without the writes after byte " + mark.size() + " " + victim,
                () -> node.restartLosingAofTail(mark),
                drawHold()));
        note(fault + " marked at byte " + mark.size() + " " + victim);
        return true;
      }
      case STALL_SERVER -> {
        int millis = 50 + random.nextInt(250);
        node.stall(Duration.ofMillis(millis));
        note(fault + " " + millis + "ms " + victim);
        return true;
      }
      case CLOCK_STEP_AT_BOOT -> {
        Duration room = node.clockOffset().plus(maxClockStep); // how far it may still go back
        if (room.compareTo(MIN_CLOCK_STEP) < 0 || !node.binary().acceptsFakeClock()) {
          return false;
        }
        long extraMillis = room.minus(MIN_CLOCK_STEP).toMillis();
        Duration step =
            MIN_CLOCK_STEP.plusMillis(extraMillis > 0 ? random.nextLong(extraMillis + 1) : 0);
        Duration offset = node.clockOffset().minus(step);
        node.restart(restartWith, offset);
        note(fault + " -" + step.toMillis() + "ms (clock " + offset.toMillis() + "ms) " + victim);
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
   * restarted with the nemesis's persistence. A two-step fault whose second step is still to come
   * ends without it (the node keeps its data); clocks stepped at boot stay as they are.
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
