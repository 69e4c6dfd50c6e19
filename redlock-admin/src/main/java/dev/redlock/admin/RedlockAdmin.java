package dev.redlock.admin;

import dev.redlock.Redlock;
import dev.redlock.RedlockException;
import dev.redlock.Semaphore;
import dev.redlock.config.RedlockConfig;
import dev.redlock.config.RestartGuard;
import dev.redlock.internal.Names;
import dev.redlock.node.GuardProbe;
import dev.redlock.node.NodeKeys;
import dev.redlock.node.NodeUri;
import dev.redlock.script.Script;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.Jedis;

/**
 * Looks at, and as a last resort breaks, the locks on a set of nodes, and vouches for new nodes:
 * what the {@code redlock} command line's {@code status}, {@code release --force} and {@code
 * init-nodes} use. Not for application code, which only ever releases its own leases.
 *
 * <pre>{@code
 * try (RedlockAdmin admin = RedlockAdmin.create(config)) {
 *   LockStatus status = admin.status("settlement:2026-11-30");
 *   System.out.println(status.verdict() + " " + status.nodes());
 * }
 * }</pre>
 *
 * <p>Opens one short-lived connection per node and call; holds no threads.
 */
public final class RedlockAdmin implements AutoCloseable {
  /**
   * The most keys a node's database may hold for {@link #checkNewNode} and {@link #vouchForNewNode}
   * to look at them: they read every key in one script, which stalls the node for about 0.1 s per
   * 100,000 keys. A lock node holds a few keys per lock; a node with more is not new.
   */
  public static final long MAX_KEYS_TO_CHECK = 100_000;

  private static final Logger audit = LoggerFactory.getLogger("dev.redlock.audit");

  private final RedlockConfig config;

  /** The nodes with their credentials, as the lock connects to them. */
  private final List<NodeUri> uris;

  private final NodeKeys keys;
  private final NodeReads reads;

  private RedlockAdmin(RedlockConfig config) {
    this.config = config;
    this.uris = config.connectionUris().stream().map(NodeUri::parse).toList();
    this.keys =
        NodeKeys.of(
            config.keyPrefix(),
            config.maxTtl().toMillis(),
            config.restartGuard() != RestartGuard.OFF,
            config.restartGuard() == RestartGuard.TRUST_FSYNCED_AOF_RESTARTS);
    this.reads = new NodeReads(config, keys);
  }

  /**
   * An admin view of the nodes {@code config} names (its key prefix, maxTtl and guard included).
   *
   * @throws NullPointerException if {@code config} is null
   */
  public static RedlockAdmin create(RedlockConfig config) {
    return new RedlockAdmin(Objects.requireNonNull(config, "config must not be null"));
  }

  /** The configuration this admin reads with. */
  public RedlockConfig config() {
    return config;
  }

  /** The nodes' URIs, without credentials, in order. */
  public List<String> nodes() {
    return uris.stream().map(NodeUri::toString).toList();
  }

  /**
   * Opens a plain connection to node {@code index}, as the lock connects (credentials, database,
   * TLS), with {@code connectTimeout} for connecting and for each reply (a silent node costs that
   * per command); the caller closes it. For checks such as {@code redlock doctor}.
   *
   * @throws IndexOutOfBoundsException if there is no such node
   */
  public Jedis connect(int index) {
    return reads.connect(uris.get(index));
  }

  /**
   * Reads every node's view of {@code resource}. A node that cannot be read gets an entry with its
   * error; this never throws for a node failure.
   *
   * @throws IllegalArgumentException if {@code resource} is blank or could name the nodes' own keys
   *     (see {@code docs/configuration.md}: it starts with '@', contains '@rw:', or ends with
   *     '@fence', '@life' or '@witness')
   */
  public LockStatus status(String resource) {
    String key = key(resource);
    List<LockStatus.Node> views = new ArrayList<>();
    for (NodeUri uri : uris) {
      views.add(reads.lock(uri, key));
    }
    return new LockStatus(resource, config.quorum(), views);
  }

  /**
   * Reads every node's view of the permits of the semaphore {@code name} of {@code permits}
   * permits: permit {@code i} is the plain lock of {@code name@permit:i}, read as {@link #status}
   * reads a resource. A permit is broken with {@link #forceRelease} of its resource ({@link
   * LockStatus#resource()}). A node that cannot be read gets an entry with its error; this never
   * throws for a node failure.
   *
   * @param name the semaphore's name, as given to {@link Redlock#semaphore}
   * @param permits how many permits to look at, as given to {@link Redlock#semaphore}: 1 to {@link
   *     Semaphore#MAX_PERMITS}
   * @throws IllegalArgumentException for what {@link Redlock#semaphore} refuses, with its message:
   *     a blank name, a name holding {@value Semaphore#PERMIT_MARK}, {@code permits} out of
   *     1..{@link Semaphore#MAX_PERMITS}, a name whose permits' resources the nodes refuse
   */
  public SemaphoreStatus semaphoreStatus(String name, int permits) {
    String[] resources = Names.permitResources(name, permits, NodeKeys::checkResource);
    List<LockStatus> statuses = new ArrayList<>(resources.length);
    for (String resource : resources) {
      statuses.add(status(resource));
    }
    return new SemaphoreStatus(name, statuses, reads.permitsHeldBeyond(uris, name, permits));
  }

  /**
   * Reads every node's view of the read-write lock {@code name}: its writer key, its live readers
   * (entries whose expiry, on the node's clock, is after the node's {@code TIME} read in the same
   * pipeline), its writer intent mark, its one fencing counter and the node's quarantine. A node
   * that cannot be read gets an entry with its error; this never throws for a node failure.
   *
   * @param name the lock's name, as given to {@link Redlock#readWriteLock}
   * @throws NullPointerException if {@code name} is null
   * @throws IllegalArgumentException for what {@link Redlock#readWriteLock} refuses, with its
   *     message: a blank name, or one the nodes refuse as a resource name
   */
  public ReadWriteStatus readWriteStatus(String name) {
    String[] rw = readWriteKeys(name);
    List<ReadWriteStatus.Node> views = new ArrayList<>();
    for (NodeUri uri : uris) {
      views.add(reads.readWrite(uri, rw));
    }
    return new ReadWriteStatus(name, config.quorum(), views);
  }

  /** The lock's writer key, readers, intent mark and fencing counter, after the name's checks. */
  private String[] readWriteKeys(String name) {
    Names.checkReadWriteName(name, NodeKeys::checkResource);
    String[] rw = NodeKeys.readWriteKeys(config.keyPrefix(), name);
    // The counter is the writer key's, as the acquiring scripts are given it.
    return new String[] {rw[0], rw[1], rw[2], NodeKeys.fenceKeyOfLock(rw[0])};
  }

  /**
   * What the restart guard's next acquire on node {@code index} would decide, asked without writing
   * anything (the acquire scripts' own guard, run read-only): for {@code redlock doctor}.
   *
   * @throws IndexOutOfBoundsException if there is no such node
   * @throws RuntimeException what Jedis throws if the node cannot be reached or refuses EVAL
   */
  public GuardView restartGuard(int index) {
    NodeUri uri = uris.get(index);
    try (Jedis jedis = reads.connect(uri)) {
      GuardProbe.View view = GuardProbe.of(jedis, keys, uri.database());
      return new GuardView(view.quarantine(), view.why(), view.marker(), view.unknown());
    }
  }

  /**
   * The restart guard's view of one node ({@link #restartGuard}).
   *
   * @param quarantine how long the next acquire would keep the node out of votes; zero: it votes
   * @param why what the guard found: {@code trusted} (the data is the one this process life
   *     stamped), {@code no marker} (a new node, or its data is gone), {@code foreign marker}
   *     (stamped by another process, database or key prefix: a restart, SWAPDB, a restore), {@code
   *     data replaced} (this life's marker came back with a copy of the data: a full resync, DEBUG
   *     RELOAD, RESTORE), {@code restarted durable} (a restart from an fsynced AOF, adopted), or
   *     {@code unknown}
   * @param marker the life marker's value, or null
   * @param unknown why no client counts the node's vote at all (INFO refused), or null
   */
  public record GuardView(Duration quarantine, String why, String marker, String unknown) {
    public GuardView {
      Objects.requireNonNull(quarantine, "quarantine must not be null");
      Objects.requireNonNull(why, "why must not be null");
    }
  }

  /**
   * Deletes {@code resource}'s key on every node, whoever holds it: the administrator's break of a
   * stuck lock. The holder is not told; if it is still running, two holders may now overlap, so use
   * it only when the holder is known to be gone (its fencing counter stays, so a fenced store still
   * refuses its writes). Logged at WARN on {@code dev.redlock.audit} with who and when.
   *
   * @param operator who breaks the lock, for the audit line (for instance {@code user@host})
   * @return per node: {@code deleted}, {@code absent}, or the error
   * @throws IllegalArgumentException if {@code resource} is blank or could name the nodes' own keys
   *     (see {@code docs/configuration.md}: it starts with '@', contains '@rw:', or ends with
   *     '@fence', '@life' or '@witness')
   */
  public List<String> forceRelease(String resource, String operator) {
    Objects.requireNonNull(operator, "operator must not be null");
    String key = key(resource);
    LockStatus before = status(resource);
    // The holder's token may exceed a lagging node's counter by up to a ttl, and only its release
    // would have raised them: the script raises every node past its clock by maxTtl as well.
    long fence = 0;
    for (LockStatus.Node node : before.nodes()) {
      fence = Math.max(fence, node.fencingCounter());
    }
    List<String> results = new ArrayList<>();
    for (NodeUri uri : uris) {
      try (Jedis jedis = reads.connect(uri)) {
        Object deleted =
            jedis.eval(
                Script.FORCE_RELEASE.source(),
                List.of(key, keys.fenceKey(resource)),
                List.of(Long.toString(fence), keys.maxTtlMillisText()));
        results.add(uri + " " + (Long.valueOf(1).equals(deleted) ? "deleted" : "absent"));
      } catch (RuntimeException e) {
        results.add(uri + " " + NodeReads.describe(e));
      }
    }
    audit.warn(
        "force-release resource='{}' by={} at={} owner={} nodes={}",
        resource,
        operator,
        Instant.now(),
        before.owner(),
        results);
    return results;
  }

  /**
   * Breaks the read-write lock {@code name} on every node, whoever holds it: in one script per node
   * (force_release_read_write.lua) its writer key, its readers and its writer intent mark are
   * deleted, and its one fencing counter is raised as {@link #forceRelease} raises a lock's (to the
   * largest counter any node showed and past the node's clock by {@code maxTtl}), so the next lease
   * of either side gets a larger token than every lease broken. The holders are not told; if one
   * still runs, it may now overlap the next holder, so use it only when they are known to be gone
   * (a fenced store still refuses their writes). Logged at WARN on {@code dev.redlock.audit} with
   * who and when, the writer and the readers removed.
   *
   * @param name the lock's name, as given to {@link Redlock#readWriteLock}
   * @param operator who breaks the lock, for the audit line (for instance {@code user@host})
   * @return per node: what was deleted ({@code writer deleted|absent, N live readers removed,
   *     intent mark deleted|absent}), or the error
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException for what {@link Redlock#readWriteLock} refuses, with its
   *     message
   */
  public List<String> forceReleaseReadWrite(String name, String operator) {
    Objects.requireNonNull(operator, "operator must not be null");
    String[] rw = readWriteKeys(name);
    ReadWriteStatus before = readWriteStatus(name);
    // As forceRelease: the nodes that gave the holders their tokens may be the ones that cannot be
    // read, so the script raises every node past its clock by maxTtl as well.
    long fence = 0;
    for (ReadWriteStatus.Node node : before.nodes()) {
      fence = Math.max(fence, node.fencingCounter());
    }
    List<String> results = new ArrayList<>();
    for (NodeUri uri : uris) {
      try (Jedis jedis = reads.connect(uri)) {
        List<?> r =
            (List<?>)
                jedis.eval(
                    Script.FORCE_RELEASE_READ_WRITE.source(),
                    List.of(rw[0], rw[3], rw[1], rw[2]),
                    List.of(Long.toString(fence), keys.maxTtlMillisText()));
        results.add(
            uri
                + " writer "
                + (Long.valueOf(1).equals(r.get(0)) ? "deleted" : "absent")
                + ", "
                + r.get(1)
                + " live reader(s) removed, intent mark "
                + (Long.valueOf(1).equals(r.get(2)) ? "deleted" : "absent"));
      } catch (RuntimeException e) {
        results.add(uri + " " + NodeReads.describe(e));
      }
    }
    audit.warn(
        "force-release read-write lock='{}' by={} at={} writer={} readers={} nodes={}",
        name,
        operator,
        Instant.now(),
        before.writer(),
        before.readers(),
        results);
    return results;
  }

  /**
   * Looks at node {@code index} as {@link #vouchForNewNode} would, and writes nothing: whether it
   * holds nothing of the key prefix ({@link NewNodeCheck.Verdict#NEW}), votes already, or served
   * locks. For showing an operator what they are about to vouch for.
   *
   * @throws IndexOutOfBoundsException if there is no such node
   * @throws RedlockException if the node cannot be reached, or refuses {@code INFO} or {@code EVAL}
   */
  public NewNodeCheck checkNewNode(int index) {
    return vouch(uris.get(index), "", false);
  }

  /**
   * Vouches that node {@code index} is new, so that the restart guard lets it vote at once instead
   * of keeping it out for {@code maxTtl}: in one script on the node, it checks that the process is
   * still the one named {@code runId} (the one the operator was shown) and that the node holds no
   * key of the prefix — no lock key, no fencing counter, no legacy key, no life marker but one
   * stamped by this process life — and only then stamps the life marker {@code <run_id>:<d>:0}
   * (trusted since always). No lock can be taken between the check and the stamp. A node that votes
   * already, or is not new, is left untouched. Logged at WARN on {@code dev.redlock.audit} with
   * who, when and the result.
   *
   * <p>The check cannot tell a new node from one that restarted empty, or from a snapshot taken
   * before it ever served a lock: vouch only for a node known never to have served a lock of this
   * key prefix. Vouching for a restarted node could let it grant a lock that another client still
   * holds.
   *
   * @param index the node's position in {@link #nodes()}, from 0
   * @param runId the {@code run_id} the operator was shown ({@link NewNodeCheck#runId()}): a node
   *     that restarted since is {@link NewNodeCheck.Verdict#RESTARTED}, and nothing is written
   * @param operator who vouches, for the audit line (for instance {@code user@host})
   * @return what was found, and the marker written if the node was vouched for
   * @throws IllegalArgumentException if {@code runId} is blank
   * @throws IndexOutOfBoundsException if there is no such node
   * @throws RedlockException if the node cannot be reached, or refuses {@code INFO} or {@code EVAL}
   */
  public NewNodeCheck vouchForNewNode(int index, String runId, String operator) {
    Objects.requireNonNull(runId, "runId must not be null");
    Objects.requireNonNull(operator, "operator must not be null");
    if (runId.isBlank()) {
      throw new IllegalArgumentException("runId must not be blank, was '" + runId + "'");
    }
    NodeUri uri = uris.get(index);
    NewNodeCheck result;
    try {
      result = vouch(uri, runId, true);
    } catch (RedlockException e) {
      audit.warn(
          "init-node node={} by={} at={} run_id={} result=FAILED error='{}'",
          uri,
          operator,
          Instant.now(),
          runId,
          e.getMessage());
      throw e;
    }
    audit.warn(
        "init-node node={} by={} at={} run_id={} result={} marker={} previous={} keys={}",
        uri,
        operator,
        Instant.now(),
        result.runId(),
        result.verdict() == NewNodeCheck.Verdict.NEW && result.vouched()
            ? "VOUCHED"
            : result.verdict(),
        result.markerWritten(),
        result.markerBefore(),
        result.keys());
    return result;
  }

  private NewNodeCheck vouch(NodeUri uri, String runId, boolean stamp) {
    Object reply;
    try (Jedis jedis = reads.connect(uri)) {
      reply =
          jedis.eval(
              Script.VOUCH_NEW_NODE.source(),
              List.of(keys.lifeKey(), keys.witnessKey()),
              List.of(
                  config.keyPrefix(),
                  runId,
                  keys.maxTtlMillisText(),
                  stamp ? "1" : "0",
                  Long.toString(MAX_KEYS_TO_CHECK),
                  Integer.toString(uri.database())));
    } catch (RuntimeException e) {
      throw new RedlockException("cannot check " + uri + ": " + NodeReads.describe(e), e);
    }
    List<?> r = (List<?>) reply;
    return new NewNodeCheck(
        uri.toString(),
        NewNodeCheck.Verdict.valueOf((String) r.get(0)),
        (String) r.get(1),
        Duration.ofSeconds(Math.max(0, (Long) r.get(4))),
        (Long) r.get(5),
        (Long) r.get(6),
        (String) r.get(2),
        (String) r.get(3),
        r.subList(7, r.size()).stream().map(String.class::cast).toList());
  }

  private String key(String resource) {
    Objects.requireNonNull(resource, "resource must not be null");
    if (resource.isBlank()) {
      throw new IllegalArgumentException("resource must not be blank, was '" + resource + "'");
    }
    NodeKeys.checkResource(resource);
    return config.keyPrefix() + resource;
  }

  /** Nothing to close today (connections are per call); here so callers can use try-with. */
  @Override
  public void close() {}
}
