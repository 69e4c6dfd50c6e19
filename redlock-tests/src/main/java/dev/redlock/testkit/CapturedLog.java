package dev.redlock.testkit;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What the log says while this is open: slf4j-simple writes to {@code System.err}, looked up at
 * each line, so the stream is swapped for one that keeps a copy and still prints (as {@code
 * RedlockCliIT} reads the audit log). For a test run by slf4j-simple, as the kit's tests are.
 */
public final class CapturedLog implements AutoCloseable {
  private final PrintStream original = System.err;
  private final ByteArrayOutputStream copy = new ByteArrayOutputStream();

  /** Starts capturing what is logged from now on. */
  public CapturedLog() {
    System.setErr(
        new PrintStream(
            new OutputStream() {
              @Override
              public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
              }

              @Override
              public void write(byte[] b, int off, int len) {
                synchronized (copy) {
                  copy.write(b, off, len);
                }
                original.write(b, off, len);
              }
            },
            true,
            StandardCharsets.UTF_8));
  }

  /** Everything logged so far. */
  public String text() {
    synchronized (copy) {
      return copy.toString(StandardCharsets.UTF_8);
    }
  }

  /** The lines logged so far that contain {@code text}. */
  public List<String> lines(String text) {
    return text().lines().filter(line -> line.contains(text)).toList();
  }

  @Override
  public void close() {
    System.setErr(original);
  }
}
