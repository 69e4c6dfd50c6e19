package dev.redlock.cli;

import java.util.concurrent.Callable;

/** A subcommand: it gets the CLI's streams and environment from the factory. */
abstract class CliCommand implements Callable<Integer> {
  RedlockCli cli;
}
