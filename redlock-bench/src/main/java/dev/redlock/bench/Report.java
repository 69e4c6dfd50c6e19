package dev.redlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/** The results of one run, as one markdown table per kind of scenario. */
final class Report {
  record Latency(
      String scenario,
      int nodes,
      String impl,
      double p50,
      double p99,
      double p999,
      double bytesPerCycle,
      double nodeCpuMicrosPerCycle,
      double clientCpuMicrosPerCycle) {}

  record Throughput(
      String scenario,
      int nodes,
      String impl,
      double perSecond,
      double commandsPerOp,
      double scriptCallsPerOp,
      String cpu,
      String waiting) {}

  final List<Latency> latencies = new ArrayList<>();
  final List<Throughput> throughputs = new ArrayList<>();

  void latency(String scenario, int nodes, String impl, Histogram h, double bytesPerCycle) {
    latency(scenario, nodes, impl, h, bytesPerCycle, Double.NaN, Double.NaN);
  }

  /**
   * @param nodeCpuMicrosPerCycle the CPU time all the nodes spent per cycle (INFO cpu, user + sys,
   *     their system calls included), or NaN if not measured
   * @param clientCpuMicrosPerCycle the CPU time this process spent per cycle, every thread of it
   *     (the JIT and the collector too), or NaN if the client is another process
   */
  void latency(
      String scenario,
      int nodes,
      String impl,
      Histogram h,
      double bytesPerCycle,
      double nodeCpuMicrosPerCycle,
      double clientCpuMicrosPerCycle) {
    latencies.add(
        new Latency(
            scenario,
            nodes,
            impl,
            h.getValueAtPercentile(50) / 1000.0,
            h.getValueAtPercentile(99) / 1000.0,
            h.getValueAtPercentile(99.9) / 1000.0,
            bytesPerCycle,
            nodeCpuMicrosPerCycle,
            clientCpuMicrosPerCycle));
  }

  /**
   * @param cpu the CPU the nodes and this process used meanwhile, as a phrase ("nodes 140%, client
   *     55%", percent of one core)
   * @param waiting for contended rows, what waiting cost and how the lock was shared, as a phrase;
   *     "–" elsewhere
   */
  void throughput(
      String scenario,
      int nodes,
      String impl,
      double perSecond,
      double commandsPerOp,
      double scriptCallsPerOp,
      String cpu,
      String waiting) {
    throughputs.add(
        new Throughput(
            scenario, nodes, impl, perSecond, commandsPerOp, scriptCallsPerOp, cpu, waiting));
  }

  /**
   * The floor a scenario's ratios refer to: "write all, then read all" where measured, else
   * sequential (N=1).
   */
  private Latency floor(String scenario, int nodes) {
    Latency sequential = null;
    for (Latency l : latencies) {
      if (l.scenario.equals(scenario) && l.nodes == nodes) {
        if (l.impl.equals("floor: write all, then read all")) {
          return l;
        }
        if (l.impl.startsWith("floor: sequential")) {
          sequential = l;
        }
      }
    }
    return sequential;
  }

  private Latency find(String scenario, int nodes, String implPrefix) {
    for (Latency l : latencies) {
      if (l.scenario.equals(scenario) && l.nodes == nodes && l.impl.startsWith(implPrefix)) {
        return l;
      }
    }
    return null;
  }

  String markdown(String machine) {
    StringBuilder md = new StringBuilder();
    md.append("Measured on ")
        .append(machine)
        .append(", 5 local redis-server nodes, one run, implementations interleaved.\n\n");
    md.append(
        "| scenario | N | implementation | p50 µs | p99 µs | p99.9 µs | p50 / floor | p50 / fenced floor | p50 / floor with our scripts | p50 / Redisson | bytes allocated per cycle | CPU µs per cycle: nodes / client |\n");
    md.append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (Latency l : latencies) {
      Latency floor = floor(l.scenario, l.nodes);
      Latency fenced = find(l.scenario, l.nodes, "floor: fenced");
      Latency redisson = find(l.scenario, l.nodes, "Redisson");
      Latency scripts = find(l.scenario, l.nodes, "floor: write all, then read all, our scripts");
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %s | %.0f | %.0f | %.0f | %s | %s | %s | %s | %s | %s / %s |%n",
              l.scenario,
              l.nodes,
              l.impl,
              l.p50,
              l.p99,
              l.p999,
              ratio(l.p50, floor == null ? Double.NaN : floor.p50),
              ratio(l.p50, fenced == null ? Double.NaN : fenced.p50),
              ratio(l.p50, scripts == null ? Double.NaN : scripts.p50),
              ratio(l.p50, redisson == null ? Double.NaN : redisson.p50),
              Double.isNaN(l.bytesPerCycle)
                  ? "–"
                  : String.format(Locale.ROOT, "%,.0f", l.bytesPerCycle),
              micros(l.nodeCpuMicrosPerCycle),
              micros(l.clientCpuMicrosPerCycle)));
    }
    md.append(
        "\n| scenario | N | implementation | per second | per second / floor | node commands per operation (with those scripts run) | script calls per operation | CPU used (of one core) | waiting and sharing; failures |\n|---|---|---|---|---|---|---|---|---|\n");
    for (Throughput t : throughputs) {
      double floor = Double.NaN;
      for (Throughput f : throughputs) {
        if (f.scenario.equals(t.scenario) && f.nodes == t.nodes && f.impl.startsWith("floor:")) {
          floor = f.perSecond;
        }
      }
      md.append(
          String.format(
              Locale.ROOT,
              "| %s | %d | %s | %,.0f | %s | %s | %s | %s | %s |%n",
              t.scenario,
              t.nodes,
              t.impl,
              t.perSecond,
              ratio(t.perSecond, floor),
              Double.isNaN(t.commandsPerOp)
                  ? "–"
                  : String.format(Locale.ROOT, "%.1f", t.commandsPerOp),
              Double.isNaN(t.scriptCallsPerOp)
                  ? "–"
                  : String.format(Locale.ROOT, "%.1f", t.scriptCallsPerOp),
              t.cpu,
              t.waiting));
    }
    return md.toString();
  }

  /** "1.04×", or "–" without a figure to compare with. */
  private static String ratio(double value, double of) {
    return Double.isNaN(of) ? "–" : String.format(Locale.ROOT, "%.2f×", value / of);
  }

  private static String micros(double micros) {
    return Double.isNaN(micros) ? "–" : String.format(Locale.ROOT, "%.0f", micros);
  }
}
