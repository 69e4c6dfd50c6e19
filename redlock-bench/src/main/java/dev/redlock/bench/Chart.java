package dev.redlock.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import javax.imageio.ImageIO;

/** Draws p50 latency by node count, one line per implementation, with Java2D: no chart library. */
final class Chart {
  private Chart() {}

  private static final Color[] COLORS = {
    new Color(0x1f77b4),
    new Color(0xff7f0e),
    new Color(0x2ca02c),
    new Color(0xd62728),
    new Color(0x9467bd),
    new Color(0x8c564b),
    new Color(0x17becf),
    new Color(0xe377c2),
    new Color(0x7f7f7f),
    new Color(0xbcbd22)
  };

  static void latencyByNodes(Report report, Path file) throws IOException {
    Map<String, Map<Integer, Double>> series = new LinkedHashMap<>();
    double max = 0;
    for (Report.Latency l : report.latencies) {
      if (l.scenario().equals(LoadDriver.SAME_RESOURCE)) {
        series.computeIfAbsent(l.impl(), k -> new TreeMap<>()).put(l.nodes(), l.p50());
        max = Math.max(max, l.p50());
      }
    }
    Font legendFont = new Font(Font.SANS_SERIF, Font.PLAIN, 12);
    int legendWidth = 0;
    Graphics2D scratch = new BufferedImage(1, 1, BufferedImage.TYPE_INT_RGB).createGraphics();
    for (String name : series.keySet()) {
      legendWidth = Math.max(legendWidth, scratch.getFontMetrics(legendFont).stringWidth(name));
    }
    scratch.dispose();
    int left = 80;
    int right = Math.max(300, legendWidth + 60); // the legend whole, however long a name
    int w = left + 520 + right;
    int h = 520;
    int top = 50;
    int bottom = 60;
    BufferedImage image = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = image.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, w, h);
    g.setColor(Color.BLACK);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
    g.drawString(
        "The same resource taken again and again: acquire + release, p50 by number of nodes",
        left,
        28);
    g.setFont(legendFont);
    int plotW = w - left - right;
    int plotH = h - top - bottom;
    double yMax = niceCeiling(max);
    g.setColor(Color.LIGHT_GRAY);
    for (int i = 0; i <= 5; i++) {
      int y = top + plotH - (int) (plotH * i / 5.0);
      g.drawLine(left, y, left + plotW, y);
      g.setColor(Color.DARK_GRAY);
      g.drawString(String.format(Locale.ROOT, "%.0f µs", yMax * i / 5), 10, y + 4);
      g.setColor(Color.LIGHT_GRAY);
    }
    int[] xs = {1, 3, 5};
    g.setColor(Color.DARK_GRAY);
    for (int x : xs) {
      int px = left + (int) (plotW * (x - 1) / 4.0);
      g.drawString("N=" + x, px - 12, top + plotH + 20);
    }
    g.drawString("nodes", left + plotW / 2 - 15, top + plotH + 42);
    int legendY = top + 10;
    int c = 0;
    for (Map.Entry<String, Map<Integer, Double>> s : series.entrySet()) {
      Color color = COLORS[c++ % COLORS.length];
      g.setColor(color);
      g.setStroke(new BasicStroke(2.5f));
      Integer prevX = null;
      Integer prevY = null;
      for (Map.Entry<Integer, Double> point : s.getValue().entrySet()) {
        int px = left + (int) (plotW * (point.getKey() - 1) / 4.0);
        int py = top + plotH - (int) (plotH * point.getValue() / yMax);
        g.fillOval(px - 4, py - 4, 8, 8);
        if (prevX != null) {
          g.drawLine(prevX, prevY, px, py);
        }
        prevX = px;
        prevY = py;
      }
      g.fillRect(left + plotW + 20, legendY - 9, 14, 10);
      g.setColor(Color.BLACK);
      g.drawString(s.getKey(), left + plotW + 40, legendY);
      legendY += 22;
    }
    g.dispose();
    ImageIO.write(image, "png", file.toFile());
  }

  private static double niceCeiling(double v) {
    for (double step : List.of(100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10_000.0, 25_000.0)) {
      if (v <= step) {
        return step;
      }
    }
    return Math.ceil(v / 10_000) * 10_000;
  }
}
