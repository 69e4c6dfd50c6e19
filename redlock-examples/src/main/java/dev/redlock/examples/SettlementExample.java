package dev.redlock.examples;

import dev.redlock.Lease;
import dev.redlock.LockUnavailableException;
import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import dev.redlock.testkit.NodeData;
import dev.redlock.testkit.RedisNodes;
import java.io.PrintStream;
import java.time.Duration;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The first program to run: several workers, each with its own {@link Redlock} (as if they were
 * separate services), compete to settle the entries of one ledger. Only the holder of the lock may
 * settle; at the end the program checks that no entry was settled twice.
 *
 * <p>With no arguments it launches 5 local redis-server nodes itself and, halfway through, kills
 * one of them to show that a minority failure does not stop settlement. Given nodes ({@code --nodes
 * redis://h1:6379,redis://h2:6379,...} or the {@code REDLOCK_NODES} environment variable) it uses
 * those and injects no fault.
 *
 * <p>Exit status: 0 when every entry was settled exactly once, 1 otherwise, 2 for bad arguments.
 */
public final class SettlementExample {
  static final String RESOURCE = "ledger:2026-11-29";
  private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");

  private final PrintStream out;
  private final int entries;
  private final int workers;

  /**
   * entry number → the worker that settled it; a second settlement of one entry is the bug we guard
   * against.
   */
  private final Map<Integer, String> settled = new ConcurrentHashMap<>();

  private final List<String> doubleSettlements = new ArrayList<>();
  private final AtomicInteger next = new AtomicInteger(1);
  private final AtomicBoolean inside = new AtomicBoolean();
  private final AtomicInteger overlaps = new AtomicInteger();

  SettlementExample(PrintStream out, int entries, int workers) {
    this.out = out;
    this.entries = entries;
    this.workers = workers;
  }

  public static void main(String[] args) throws Exception {
    List<String> nodes;
    try {
      nodes = nodesFrom(args, System.getenv("REDLOCK_NODES"));
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      System.err.println(
          "usage: SettlementExample [--nodes redis://host:port,redis://host:port,...]");
      System.exit(2);
      return;
    }
    boolean ok = new SettlementExample(System.out, 24, 4).run(nodes);
    if (!ok) {
      System.exit(1);
    }
  }

  /** The nodes from {@code --nodes} or REDLOCK_NODES; an empty list means "launch local nodes". */
  static List<String> nodesFrom(String[] args, String env) {
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--nodes") && i + 1 < args.length) {
        return split(args[i + 1]);
      } else if (args[i].startsWith("--nodes=")) {
        return split(args[i].substring("--nodes=".length()));
      } else if (args[i].equals("--help") || args[i].equals("-h")) {
        throw new IllegalArgumentException("help requested");
      } else {
        throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
      }
    }
    return env == null || env.isBlank() ? List.of() : split(env);
  }

  private static List<String> split(String list) {
    List<String> nodes =
        Arrays.stream(list.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    if (nodes.isEmpty()) {
      throw new IllegalArgumentException("--nodes needs at least one redis:// URI");
    }
    return nodes;
  }

  /** Runs the settlement; returns true if every entry was settled exactly once. */
  boolean run(List<String> givenNodes) throws Exception {
    if (!givenNodes.isEmpty()) {
      say("using the given nodes " + givenNodes);
      return settle(givenNodes, null);
    }
    try (RedisNodes local = RedisNodes.start(5)) {
      say(
          "launched 5 local redis-server nodes (redis "
              + local.node(0).binary().version()
              + "): "
              + local.uris());
      // These nodes were created a moment ago and never held a lock: vouch for their data, or the
      // restart guard keeps them out of votes for maxTtl. Never do this for a node that restarted.
      NodeData.vouchForNewNodes(local);
      return settle(local.uris(), local);
    }
  }

  private boolean settle(List<String> nodes, RedisNodes local) throws Exception {
    RedlockConfig config =
        RedlockConfig.builder()
            .nodes(nodes)
            .nodeTimeout(Duration.ofMillis(100))
            .retryDelay(Duration.ofMillis(20))
            .retryJitter(Duration.ofMillis(30))
            .build();
    say(
        "quorum "
            + config.quorum()
            + " of "
            + nodes.size()
            + "; "
            + workers
            + " workers settle "
            + entries
            + " entries of '"
            + RESOURCE
            + "'");
    List<Redlock> clients = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(workers);
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int w = 1; w <= workers; w++) {
        Redlock redlock = Redlock.create(config); // one per service; here one per worker
        clients.add(redlock);
        String name = "worker-" + w;
        running.add(pool.submit(() -> work(name, redlock, local)));
      }
      for (Future<?> f : running) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
      clients.forEach(Redlock::close);
    }
    return verdict();
  }

  private Void work(String name, Redlock redlock, RedisNodes local) throws InterruptedException {
    while (true) {
      try (Lease lease = redlock.acquire(RESOURCE, Duration.ofSeconds(5), Duration.ofSeconds(30))) {
        int entry = next.get();
        if (entry > entries) {
          return null; // all settled
        }
        if (!inside.compareAndSet(false, true)) {
          overlaps.incrementAndGet();
        }
        say(
            String.format(
                "%s holds the lock (valid %d ms) and settles entry #%d; nodes: %s",
                name, lease.remainingValidity().toMillis(), entry, lease.nodeOutcomes()));
        Thread.sleep(5); // the settlement itself: a payment call, a ledger write
        if (!lease.isValid()) {
          say(
              name
                  + " lost its lease before writing; entry #"
                  + entry
                  + " is left for the next holder");
        } else {
          String previous = settled.putIfAbsent(entry, name);
          if (previous != null) {
            synchronized (doubleSettlements) {
              doubleSettlements.add("entry #" + entry + " by " + previous + " and " + name);
            }
          }
          next.incrementAndGet();
        }
        inside.set(false);
        if (local != null && entry == entries / 2 && local.node(4).isRunning()) {
          say("fault: killing node " + local.node(4).uri() + " (a minority); settlement goes on");
          local.node(4).kill();
        }
      } catch (LockUnavailableException e) {
        say(name + " could not get the lock: " + e.getMessage());
      }
      // Other work between entries. Redlock is not fair: without this pause the worker that just
      // released would usually win again before the others wake from their retry delay.
      Thread.sleep(java.util.concurrent.ThreadLocalRandom.current().nextInt(10, 40));
    }
  }

  private boolean verdict() {
    boolean complete = settled.size() == entries;
    boolean ok = complete && doubleSettlements.isEmpty() && overlaps.get() == 0;
    Map<String, Long> byWorker = new java.util.TreeMap<>();
    settled.values().forEach(w -> byWorker.merge(w, 1L, Long::sum));
    say("settled " + settled.size() + " of " + entries + " entries; by worker: " + byWorker);
    say(
        "double settlements: "
            + (doubleSettlements.isEmpty() ? "none" : doubleSettlements)
            + "; overlapping holders: "
            + overlaps.get());
    say(ok ? "CHECK PASSED: every entry settled exactly once" : "CHECK FAILED");
    return ok;
  }

  private void say(String line) {
    synchronized (out) {
      out.println(LocalTime.now().format(CLOCK) + "  " + line);
    }
  }
}
