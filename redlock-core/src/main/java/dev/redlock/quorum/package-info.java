/**
 * The Redlock algorithm over N independent Redis nodes: one vote sent to every node at once and
 * counted ({@link dev.redlock.quorum.QuorumStore}), fenced and rolled back; the fan-out and the
 * tally of one request ({@code FanOut}, {@code Ballot}), per-node pipelines for renewals, and the
 * releases a node has not confirmed yet. Built from plain values; one node's I/O is behind {@link
 * dev.redlock.node.LockNode}. Not exported by the module.
 */
package dev.redlock.quorum;
