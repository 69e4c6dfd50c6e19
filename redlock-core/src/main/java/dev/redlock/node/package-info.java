/**
 * One Redis node: its address ({@link dev.redlock.node.NodeUri}), its pooled connections and how
 * one request is written and its reply read later ({@link dev.redlock.node.LockNode}, made by
 * {@code LockNode.connect}), how a script's call is written and the keys it touches, and what a
 * connection learns of the process it reached (the restart guard's node life). Knows nothing of
 * quorums or leases; imports only {@code dev.redlock.internal}, the scripts and the lease request.
 * Not exported by the module.
 */
package dev.redlock.node;
