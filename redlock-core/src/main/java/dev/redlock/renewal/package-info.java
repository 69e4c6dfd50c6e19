/**
 * Keeping a lease alive: {@link dev.redlock.renewal.Renewal}, one per kept-alive lease, renews it
 * on the store before its validity runs out, tries again on a missed round while a try can still be
 * decided in time, and loses it when none can, when the nodes refuse, or at maxHold; an extend by
 * hand counts its votes the same way. What it needs of the lease is {@link
 * dev.redlock.renewal.RenewedLease}. Imports only the API's loss and outcome types, the SPI's tally
 * and {@code timing}. Not exported by the module.
 */
package dev.redlock.renewal;
