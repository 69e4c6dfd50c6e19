/**
 * Spring Integration's lock registry over Redlock: {@link
 * dev.redlock.spring.integration.RedlockLockRegistry} is the bean, {@link
 * dev.redlock.spring.integration.RedlockLock} the lock it hands out (a {@code DistributedLock} with
 * the lease's fencing token).
 *
 * <pre>{@code
 * @Bean
 * RedlockLockRegistry lockRegistry(Redlock redlock) {       // was: new RedisLockRegistry(...)
 *   return RedlockLockRegistry.builder(redlock, Duration.ofSeconds(30)).build();
 * }
 * }</pre>
 */
package dev.redlock.spring.integration;
