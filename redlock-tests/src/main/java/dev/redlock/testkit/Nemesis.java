package dev.redlock.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a random schedule of process faults — freeze (SIGSTOP) and kill-then-restart — to real
 * nodes, from a seed (print it: the same seed replays the same schedule), never more than {@code
 * maxFaulty} nodes at once, each fault lasting 50–300 ms. Runs on its own thread until {@link
 * #close()}, which heals every node. Each fault is logged with its time.
 */
public final class Nemesis implements AutoCloseable {
  private static final Logger faults = LoggerFactory.getLogger("dev.redlock.testkit.faults");

  private final RedisNodes nodes;
  private final Random random;
  private final int maxFaulty;
  private final Persistence restartWith;
  private final List<String> log = new CopyOnWriteArrayList<>();
  private final Thread thread;
  private volatile boolean running = true;

  private Nemesis(RedisNodes nodes, long seed, int maxFaulty, Persistence restartWith) {
    this.nodes = nodes;
    this.random = new Random(seed);
    this.maxFaulty = maxFaulty;
    this.restartWith = restartWith;
    this.thread = new Thread(this::run, "nemesis-" + seed);
    this.thread.setDaemon(true);
  }

  /**
   * Starts a nemesis.
   *
   * @param maxFaulty at most this many nodes faulty at once (a minority, for the safe suites)
   * @param restartWith how a killed node comes back: {@link Persistence#AOF} keeps its data
   */
  public static Nemesis start(RedisNodes nodes, long seed, int maxFaulty, Persistence restartWith) {
    if (maxFaulty < 1 || maxFaulty > nodes.size()) {
      throw new IllegalArgumentException(
          "maxFaulty must be 1.." + nodes.size() + ", was " + maxFaulty);
    }
    Nemesis nemesis = new Nemesis(nodes, seed, maxFaulty, restartWith);
    nemesis.thread.start();
    return nemesis;
  }

  /** The faults applied so far, in order, with their times. */
  public List<String> log() {
    return List.copyOf(log);
  }

  private void run() {
    Map<Integer, Long> healAt = new HashMap<>();
    try {
      while (running) {
        long now = System.nanoTime();
        for (Integer node : new ArrayList<>(healAt.keySet())) {
          if (healAt.get(node) <= now) {
            if (nodes.node(node).isPaused()) {
              nodes.node(node).resume();
              note("resume " + node);
            }
            healAt.remove(node);
          }
        }
        if (healAt.size() < maxFaulty) {
          int victim = random.nextInt(nodes.size());
          if (!healAt.containsKey(victim)) {
            RedisNode node = nodes.node(victim);
            if (random.nextBoolean()) {
              node.pause();
              note("pause " + victim);
            } else {
              node.kill();
              node.restart(restartWith);
              note("kill+restart(" + restartWith + ") " + victim);
            }
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

  private void note(String fault) {
    String line = System.nanoTime() + " " + fault;
    log.add(line);
    faults.info("nemesis: {}", line);
  }

  /** Stops the schedule and heals every node (resumes the paused, restarts the killed). */
  @Override
  public void close() {
    running = false; // the loop ends within one step (a sleep of at most 80 ms, or one restart)
    try {
      thread.join(Duration.ofSeconds(30).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    nodes.heal(restartWith);
  }
}
