/**
 * The operator's tools over the nodes of a lock, not for application code: what the {@code redlock}
 * command line's {@code status}, {@code release --force}, {@code init-nodes}, {@code quarantine}
 * and {@code doctor} use. {@link dev.redlock.admin.RedlockAdmin} is the entry point.
 *
 * <pre>{@code
 * try (RedlockAdmin admin = RedlockAdmin.create(config)) {
 *   LockStatus status = admin.status("settlement:2026-11-30");
 *   System.out.println(status.verdict() + " " + status.nodes());
 * }
 * }</pre>
 */
package dev.redlock.admin;
