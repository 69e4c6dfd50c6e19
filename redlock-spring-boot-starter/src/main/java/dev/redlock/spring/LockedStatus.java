package dev.redlock.spring;

import dev.redlock.LockUnavailableException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * A {@link Locked} web method whose lock was not acquired, answered with a status rather than a
 * 500: {@code 409 Conflict} when another holder has the lock, {@code 503 Service Unavailable} when
 * the nodes stood in the way; the method did not run, so the request may be sent again. The body is
 * a problem detail (RFC 9457) that names neither the resource nor the nodes.
 *
 * <p>Only the lock of the {@code @Locked} method itself, before the method ran: a {@link
 * LockUnavailableException} thrown from inside a method (a lock it takes itself, after it may have
 * acted) stays a 500, since a client may retry a 409 or 503. Resolved after every other resolver,
 * so an application's own {@code @ExceptionHandler} wins, whatever its order.
 */
public final class LockedStatus implements HandlerExceptionResolver, Ordered {
  /** Creates the resolver; the auto-configuration makes it in a servlet web application. */
  public LockedStatus() {}

  @Override
  public ModelAndView resolveException(
      HttpServletRequest request, HttpServletResponse response, Object handler, Exception ex) {
    if (!(ex instanceof LockUnavailableException e) || !markedNotRun(e)) {
      return null; // not ours: the next resolver, or a 500
    }
    boolean busy = e.reason() == LockUnavailableException.Reason.HELD_ELSEWHERE;
    int status = busy ? 409 : 503;
    String body =
        "{\"type\":\"about:blank\",\"title\":\""
            + (busy ? "Locked elsewhere" : "Lock unavailable")
            + "\",\"status\":"
            + status
            + ",\"detail\":\""
            + (busy
                ? "The resource is locked by another request; try again later."
                : "The lock service could not decide; try again later.")
            + "\"}";
    try {
      response.setStatus(status);
      response.setContentType("application/problem+json");
      response.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
    } catch (IOException io) {
      return null; // the response is gone: let the container deal with it
    }
    return new ModelAndView(); // handled
  }

  private static boolean markedNotRun(LockUnavailableException e) {
    for (Throwable s : e.getSuppressed()) {
      if (s instanceof NotRun) { // marked by LockedInterceptor
        return true;
      }
    }
    return false;
  }

  @Override
  public int getOrder() {
    return Ordered.LOWEST_PRECEDENCE;
  }
}
