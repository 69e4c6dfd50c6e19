package dev.redlock.testkit;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a test method (or every test of a class) {@code value} real redis-server nodes behind fault
 * proxies: declare a {@link FaultyNodes} parameter. The nodes are started before the test and
 * stopped after it, by PID. Under {@code CI=true} a missing redis-server fails the test; elsewhere
 * it is skipped.
 *
 * <pre>{@code
 * @Test
 * @WithRedisNodes(5)
 * void survivesASlowMinority(FaultyNodes nodes) { ... }
 * }</pre>
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(RedisNodesExtension.class)
public @interface WithRedisNodes {
  /** How many nodes. */
  int value();

  /** How the nodes keep their data across a restart. */
  Persistence persistence() default Persistence.NONE;
}
