package dev.redlock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the method under a lock: acquired before it starts, renewed while it runs, released when it
 * returns or throws (as {@link dev.redlock.Redlock#withLock} does).
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * @Locked(resource = "settlement:#{T(java.time.LocalDate).now()}", ttl = "30s",
 *     lockAtLeastFor = "1m")
 * void settle() {
 *   ledger.settle(CurrentLease.fencingToken());
 * }
 * }</pre>
 *
 * <p>The method's bean must be a Spring bean (the lock is a proxy's advice: a call from inside the
 * same object is not locked). Durations are written as the core reads them ({@code 50ms}, {@code
 * 30s}, {@code 1m}, {@code 1h}, ISO-8601) and may be {@code ${...}} placeholders; a malformed one,
 * or a resource expression that does not parse, fails the context's start naming the method and the
 * attribute. The ttl's own rules (larger than the node timeout plus drift, at most {@code maxTtl},
 * long enough to renew) are the Redlock's and are checked at each call.
 *
 * <p>Inside the method, {@link CurrentLease#get()} is the lease (its {@link
 * dev.redlock.Lease#fencingToken() fencing token} is what the protected resource should check).
 * When the lease is lost while the method runs, the method's thread is interrupted (unless {@code
 * redlock.taskInterruption=NEVER}) and {@code CurrentLease.get().checkValid()} throws.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Locked {

  /**
   * The resource to lock: text with {@code #{...}} SpEL blocks, evaluated at each call with the
   * method's arguments by name ({@code #date}) or position ({@code #p0}), and beans as {@code
   * @name}: {@code "settlement:#{#date}"}. Text without a block is the name as is. The result must
   * not be blank.
   */
  String resource();

  /**
   * How long the nodes keep the lock if this process dies; the lease is renewed every {@code ttl ×
   * renewalFraction} while the method runs.
   */
  String ttl();

  /** How long to wait for the lock before giving up; {@code 0s} (default): one attempt. */
  String maxWait() default "0s";

  /**
   * The least time the lock stays held from its grant, however quickly the method returns
   * (ShedLock's {@code lockAtLeastFor}): so that a job scheduled on several nodes whose clocks
   * differ a little runs once per tick, not once per node. The lease stays renewed until then and
   * is released at that time; {@code 0s} (default): released when the method ends. Closing the
   * application context releases it early.
   */
  String lockAtLeastFor() default "0s";

  /** What to do when the lock is not acquired. */
  NotAcquired whenNotAcquired() default NotAcquired.DEFAULT;

  /** What a {@link Locked} method does when the lock is not acquired within {@code maxWait}. */
  enum NotAcquired {
    /**
     * {@link #SKIP} for a {@code @Scheduled} method (another node runs this tick), {@link #THROW}
     * otherwise (the caller asked for work that did not happen and must know).
     */
    DEFAULT,
    /**
     * The method does not run and returns null (an empty {@code Optional} for {@code Optional});
     * logged at DEBUG when the lock is held elsewhere, at WARN when the nodes stood in the way. Not
     * allowed on a method returning a primitive.
     */
    SKIP,
    /**
     * The method does not run, and the caller gets the {@link dev.redlock.LockUnavailableException}
     * that says why ({@code reason()}: held elsewhere, or nodes unreachable).
     */
    THROW
  }
}
