/**
 * The Lua scripts every node runs, one {@code .lua} resource each beside {@link
 * dev.redlock.script.Script}, which loads them once with their SHA-1 for {@code EVALSHA}: acquire
 * (the restart guard, {@code SET NX PX} and the fencing counter in one round trip), extend,
 * release, their forms for sets and read-write locks, the protected side's fenced write and the
 * operator's breaks. What each key holds is in {@code docs/fencing.md}. Imports nothing of the
 * library. Not exported by the module.
 */
package dev.redlock.script;
