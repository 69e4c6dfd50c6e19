/**
 * Time as a lease sees it: the monotonic clock every validity is read on ({@link
 * dev.redlock.timing.Ticker}, which also counts the time a suspended machine did not see pass), and
 * the validity arithmetic ({@link dev.redlock.timing.Validity}: {@code start + ttl - drift}, and
 * the floor every ttl must clear). Imports nothing of the library. Not exported by the module.
 */
package dev.redlock.timing;
