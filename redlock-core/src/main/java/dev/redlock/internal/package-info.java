/** What two or more of the library's packages share; imports nothing of the library. */
package dev.redlock.internal;
