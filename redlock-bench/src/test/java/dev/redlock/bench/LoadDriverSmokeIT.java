package dev.redlock.bench;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.redlock.testkit.RedisFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps docs/performance.md's one command working: the whole driver runs in smoke mode (tiny
 * rounds), and every scenario and implementation reaches the table and the chart. It measures
 * nothing worth reading and asserts no timing: speed is read from full runs, never asserted.
 */
@Tag("full") // Twenty seconds of a working bench command: the full tier.
class LoadDriverSmokeIT {
  @Test
  void everyScenarioAndImplementationReachesTheReport(@TempDir Path out) throws Exception {
    RedisFixture.requireRedisServer(); // the code under test starts its own nodes
    System.setProperty("org.slf4j.simpleLogger.log.org.netcrusher", "off");
    new LoadDriver(LoadDriver.Length.SMOKE, out).run();
    String table = Files.readString(out.resolve("performance-results.md"));
    for (String row :
        new String[] {
          "| uncontended, same resource | 1 | redlock (this library)",
          "| uncontended, same resource | 5 | floor: write all, then read all |",
          "| uncontended, same resource | 1 | floor: fenced, write all, then read all |",
          "| uncontended, same resource | 5 | floor: fenced, write all, then read all |",
          "| uncontended, new resource | 5 | floor: fenced, write all, then read all |",
          "| p50 / floor | p50 / fenced floor |",
          "| uncontended, same resource | 5 | floor: write all, then read all, our scripts",
          "| uncontended, same resource | 5 | Redisson 3.52 RedissonRedLock",
          "| uncontended, new resource | 5 | redlock (this library)",
          "| one node +20 ms | 5 | redlock (this library)",
          "| contended, 8 threads, one key | 5 | redlock (this library)",
          "| contended, 8 threads, one key | 5 | Redisson 3.52 RedissonRedLock",
          "| distinct keys, 1 threads | 5 | floor: our scripts, 4 connections per node",
          "| distinct keys, 256 threads | 5 | floor: our scripts, 4 connections per node",
          "| distinct keys, 256 threads | 5 | redlock (this library)",
          "| uncontended, same lock, plain or read-write | 5 | redlock, read side",
          "| uncontended, same lock, plain or read-write | 5 | redlock, write side",
          "| contended, 8 threads, one read-write lock, 1 in 8 cycles a writer | 5 |",
          "| uncontended, same resource, one lock or a semaphore's permit | 5 | redlock, a permit",
          "| contended, 8 threads, a semaphore of 2 permits | 5 | redlock, a semaphore of 2",
          "nodes "
        }) {
      assertTrue(table.contains(row), "missing " + row + " in\n" + table);
    }
    for (String impl :
        new String[] {"floor: write all, then read all |", "redlock (this library)", "Redisson"}) {
      String row =
          table
              .lines()
              .filter(l -> l.startsWith("| uncontended, same resource | 5 | " + impl))
              .findFirst()
              .orElseThrow();
      assertTrue(
          row.matches(".*\\| \\d+ / \\d+ \\|$"),
          "the nodes' and the client's CPU per cycle, as numbers, in " + row);
    }
    assertTrue(Files.size(out.resolve("performance-latency.png")) > 1000, "the chart was drawn");
  }
}
