package dev.redlock.cli;

import dev.redlock.RedlockException;
import dev.redlock.admin.NewNodeCheck;
import dev.redlock.admin.RedlockAdmin;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import java.io.BufferedReader;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(
    name = "init-nodes",
    mixinStandardHelpOptions = true,
    description = {
      "Lets new nodes vote at once, instead of after the restart guard's quarantine of maxTtl:"
          + " for nodes you know have never served a lock of this key prefix (a new deployment, a"
          + " node added to one).",
      "It first shows each node: new (no key of the prefix), voting already (nothing to do), or"
          + " NOT NEW (it holds lock keys, fencing counters or a life marker of an earlier process"
          + " life: it served locks, or restarted from data that did), and writes nothing unless"
          + " every node named is new or voting. Then it asks you to type each new node's"
          + " host:port, unless --yes, and stamps its life marker {prefix}@life (trusted since"
          + " always) and the guard's witness in one script that checks again, on the node, that"
          + " it still holds nothing of the prefix and is still the process you were shown.",
      "So: a lock taken on a node between the check and your answer makes it NOT NEW, and"
          + " nothing is written; a node restarted meanwhile is refused (another run_id); a node"
          + " restarted or resynced after the stamp is quarantined again (the marker names the old"
          + " run_id, the witness is gone),"
          + " unless it kept every write (AOF, appendfsync always) and clients trust fsynced AOF"
          + " restarts.",
      "What no check can see: a node that restarted empty, or from a snapshot taken before it"
          + " held any key of the prefix, looks exactly as new. Vouching for it lets it vote for a"
          + " lock it forgot, and a second holder may get that lock. Vouch only for nodes you know"
          + " are new; after a restart, wait out the quarantine.",
      "Each vouch is logged on the dev.redlock.audit logger with who, when, the node and the"
          + " result."
    },
    footer = {
      "",
      "Exit statuses: 0 every node named votes now (vouched for, or voting already),"
          + " 1 not confirmed, or a node is not new (nothing written on it), 2 bad flags or a node"
          + " not in the list, 125 a node could not be reached or read.",
      "",
      "Examples:",
      "  redlock init-nodes --all",
      "  redlock init-nodes --node redis://10.0.0.4:6379 --reason 'new node, CHG-2291'",
      "  redlock init-nodes --all --yes --reason 'provisioned by terraform'"
    })
final class InitNodesCommand extends CliCommand {
  private static final Logger audit = LoggerFactory.getLogger("dev.redlock.audit");

  @Spec CommandLine.Model.CommandSpec spec;
  @Mixin NodeOptions nodes;

  @ArgGroup(exclusive = true, multiplicity = "1")
  Which which;

  /** Which nodes: some, or all of the list. */
  static final class Which {
    @Option(
        names = "--node",
        required = true,
        split = ",",
        paramLabel = "NODE",
        description =
            "A node to vouch for: its URI as in the node list (redis://host:port), or its position"
                + " in the list, counting from 1. Repeat it, or separate by commas.")
    List<String> nodes;

    @Option(
        names = "--all",
        required = true,
        description = "Every node of the list (those that vote already are left alone).")
    boolean all;
  }

  @Option(names = "--yes", description = "Do not ask for confirmation.")
  boolean yes;

  @Option(names = "--reason", paramLabel = "TEXT", description = "Why, for the audit line.")
  String reason;

  @Override
  public Integer call() throws IOException {
    RedlockConfig config = nodes.config(spec, cli.env);
    String prefix = config.keyPrefix();
    try (RedlockAdmin admin = RedlockAdmin.create(config)) {
      List<String> list = admin.nodes();
      TreeSet<Integer> chosen = new TreeSet<>();
      if (which.all) {
        for (int i = 0; i < list.size(); i++) {
          chosen.add(i);
        }
      } else {
        for (String given : which.nodes) {
          chosen.add(NodeOptions.position(spec, "--node", given, list));
        }
      }

      // 1. Look, write nothing.
      Map<Integer, NewNodeCheck> fresh = new LinkedHashMap<>();
      List<String> refused = new ArrayList<>();
      List<String> unreachable = new ArrayList<>();
      int voting = 0;
      for (int i : chosen) {
        NewNodeCheck check;
        try {
          check = admin.checkNewNode(i);
        } catch (RedlockException e) {
          cli.out.println(e.getMessage()); // "cannot check <uri>: why"
          unreachable.add(list.get(i));
          continue;
        }
        cli.out.println(describe(check, prefix));
        switch (check.verdict()) {
          case NEW -> fresh.put(i, check);
          case VOTES -> voting++;
          default -> refused.add(check.node() + " " + check.verdict());
        }
      }
      if (config.restartGuard() == RestartGuard.OFF) {
        cli.out.println("note: the restart guard is off in this configuration");
      }
      if (!refused.isEmpty() || !unreachable.isEmpty()) {
        cli.err.println(
            "redlock init-nodes: nothing written: "
                + (refused.isEmpty() ? "" : refused.size() + " node(s) not new")
                + (refused.isEmpty() || unreachable.isEmpty() ? "" : ", ")
                + (unreachable.isEmpty()
                    ? ""
                    : unreachable.size() + " node(s) could not be checked")
                + (refused.isEmpty()
                    ? ""
                    : "; a node that served locks sits out its quarantine (see 'redlock doctor'),"
                        + " or name only the new nodes with --node"));
        audit.warn(
            "init-nodes by={} at={} result=REFUSED not_new={} not_checked={}; nothing written",
            operator(reason),
            Instant.now(),
            refused,
            unreachable);
        return unreachable.isEmpty() ? ExitCodes.CHECK_FAILED : ExitCodes.FAILED;
      }
      if (fresh.isEmpty()) {
        cli.out.println("init-nodes: every node named votes already; nothing to do");
        return ExitCodes.OK;
      }

      // 2. The operator's word, node by node.
      if (!yes) {
        cli.out.println(
            "Vouching says these nodes have never served a lock of prefix '"
                + prefix
                + "': they vote at once. A node that restarted empty looks the same; vouching for"
                + " one may grant a lock twice.");
        BufferedReader input = cli.input(); // one reader: each would read ahead of its line
        for (int i : fresh.keySet()) {
          String address = NodeOptions.address(list.get(i));
          cli.out.print("Type the node's host:port (" + address + ") to vouch that it is new: ");
          cli.out.flush();
          String answer = input.readLine();
          if (answer == null || !answer.trim().equals(address)) {
            cli.err.println("redlock: not confirmed; nothing was changed");
            return ExitCodes.CHECK_FAILED;
          }
        }
      }

      // 3. Check again and stamp, atomically, on each node.
      String by = operator(reason);
      int vouched = 0;
      int failed = 0;
      int notNew = 0;
      for (Map.Entry<Integer, NewNodeCheck> e : fresh.entrySet()) {
        NewNodeCheck done;
        try {
          done = admin.vouchForNewNode(e.getKey(), e.getValue().runId(), by);
        } catch (RedlockException error) {
          cli.out.println(error.getMessage() + "; nothing written");
          failed++;
          continue;
        }
        if (done.vouched()) {
          vouched++;
          cli.out.println(
              "vouched for "
                  + done.node()
                  + ": "
                  + NodeLife.lifeKey(prefix)
                  + " = "
                  + done.markerWritten()
                  + "; it votes now");
        } else if (done.verdict() == NewNodeCheck.Verdict.VOTES) {
          voting++;
          cli.out.println(done.node() + ": votes already; nothing written");
        } else {
          notNew++;
          cli.out.println(describe(done, prefix) + "; nothing written");
        }
      }
      cli.out.println(
          "init-nodes: "
              + vouched
              + " vouched for, "
              + voting
              + " voting already"
              + (notNew == 0 ? "" : ", " + notNew + " refused")
              + (failed == 0 ? "" : ", " + failed + " could not be checked"));
      return failed > 0 ? ExitCodes.FAILED : notNew > 0 ? ExitCodes.CHECK_FAILED : ExitCodes.OK;
    }
  }

  /** One line per node: what it is, the facts an operator judges newness by, and the verdict. */
  private static String describe(NewNodeCheck c, String prefix) {
    String facts =
        "run_id "
            + NodeLife.shortId(c.runId())
            + ", up "
            + NodeLife.uptime(c.uptime().toSeconds())
            + ", "
            + c.keysInDatabase()
            + " key(s) in the database"
            + (c.keysLoadedAtStart() > 0
                ? ", " + c.keysLoadedAtStart() + " loaded from its data files at start"
                : "");
    return c.node()
        + ": "
        + switch (c.verdict()) {
          case NEW ->
              "new: no key of prefix '"
                  + prefix
                  + "'"
                  + (c.markerBefore() == null
                      ? ""
                      : " but a life marker this process life stamped (" + c.markerBefore() + ")")
                  + " ("
                  + facts
                  + ")"
                  + (c.keysLoadedAtStart() > 0
                      ? "; careful: a node that loaded data at start had an earlier life"
                      : "");
          case VOTES ->
              "votes already (life marker "
                  + c.markerBefore()
                  + " of this process life, over maxTtl old): nothing to do";
          case NOT_NEW ->
              "NOT NEW: holds "
                  + String.join(", ", c.keys())
                  + (c.keys().size() >= 10 ? ", ..." : "")
                  + (c.keys().contains(NodeLife.lifeKey(prefix))
                      ? " (a life marker of another process life, or of data replaced since: it restarted or"
                          + " was resynced from data)"
                      : "")
                  + ": it served locks, or restarted from data that did ("
                  + facts
                  + ")";
          case RESTARTED ->
              "RESTARTED since it was shown (now run_id "
                  + NodeLife.shortId(c.runId())
                  + "): run init-nodes again to see it as it is now";
          case TOO_MANY_KEYS ->
              "NOT CHECKED: "
                  + c.keysInDatabase()
                  + " keys in the database, over "
                  + RedlockAdmin.MAX_KEYS_TO_CHECK
                  + " (checking them would stall the node): not a new lock node; it votes once"
                  + " its quarantine ends";
        };
  }
}
