package dev.redlock;

import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The audit trail listener: one key=value line per event on {@code dev.redlock.audit}. */
final class AuditLog implements RedlockListener {
  static final AuditLog INSTANCE = new AuditLog();
  private static final Logger log = LoggerFactory.getLogger("dev.redlock.audit");

  private AuditLog() {}

  @Override
  public void onEvent(LockEvent e) {
    switch (e.kind()) {
      case ATTEMPT -> {}
      case FAILED -> {
        if (log.isDebugEnabled()) {
          log.debug(line(e));
        }
      }
      default -> {
        if (log.isInfoEnabled()) {
          log.info(line(e));
        }
      }
    }
  }

  /**
   * The line, e.g. {@code event=acquired resource="ledger:7" owner=3fa94c1e fence=17960...
   * valid_ms=29690 votes=3/5}.
   */
  static String line(LockEvent e) {
    StringBuilder line =
        new StringBuilder(160)
            .append("event=")
            .append(e.kind().name().toLowerCase(Locale.ROOT))
            .append(" resource=\"")
            .append(e.resource().replace("\"", "\\\""))
            .append('"');
    if (!e.owner().isEmpty()) {
      line.append(" owner=").append(e.owner());
    }
    if (e.fencingToken() != 0) {
      line.append(" fence=").append(e.fencingToken());
    }
    if (!e.validity().isZero()) {
      line.append(" valid_ms=").append(e.validity().toMillis());
    }
    if (!e.elapsed().isZero()) {
      line.append(" elapsed_us=").append(e.elapsed().toNanos() / 1000);
    }
    if (e.quorum() > 0) {
      line.append(" votes=").append(e.votes()).append('/').append(e.quorum());
    }
    if (!e.reason().isEmpty()) {
      line.append(" reason=").append(e.reason());
    }
    if (e.kind() == LockEvent.Kind.FAILED || e.kind() == LockEvent.Kind.LOST) {
      line.append(" nodes=").append(e.nodeOutcomes());
    }
    return line.toString();
  }
}
