/**
 * What two or more of the library's packages share, and nothing else: the monotonic clock, the
 * bounded pool of I/O threads, and the hash that stands for an owner token in logs. Imports nothing
 * of the library. Not exported by the module.
 */
package dev.redlock.internal;
