package dev.redlock.spring;

import dev.redlock.LockUnavailableException;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * A lock a web request could not get, answered with a status rather than a 500: {@code 409
 * Conflict} when another holder has it ({@link LockUnavailableException.Reason#HELD_ELSEWHERE}),
 * {@code 503 Service Unavailable} when the nodes stood in the way. The body is a problem detail
 * (RFC 9457) that names neither the resource nor the nodes; the exception's full account stays in
 * the server's logs. Last in order: an application's own handler of {@link
 * LockUnavailableException} wins.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class LockedStatusAdvice {
  /** Creates the advice; the auto-configuration makes it in a web application. */
  public LockedStatusAdvice() {}

  /**
   * The status for {@code e}.
   *
   * @param e the lock the request could not get
   * @return 409 or 503, with a problem detail
   */
  @ExceptionHandler(LockUnavailableException.class)
  public ResponseEntity<ProblemDetail> notAcquired(LockUnavailableException e) {
    boolean busy = e.reason() == LockUnavailableException.Reason.HELD_ELSEWHERE;
    HttpStatus status = busy ? HttpStatus.CONFLICT : HttpStatus.SERVICE_UNAVAILABLE;
    ProblemDetail problem =
        ProblemDetail.forStatusAndDetail(
            status,
            busy
                ? "The resource is locked by another request; try again later."
                : "The lock service could not decide; try again later.");
    problem.setTitle(busy ? "Locked elsewhere" : "Lock unavailable");
    return ResponseEntity.status(status).body(problem);
  }
}
