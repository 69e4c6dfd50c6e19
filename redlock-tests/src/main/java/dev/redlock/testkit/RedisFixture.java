package dev.redlock.testkit;

import dev.redlock.Redlock;
import dev.redlock.config.RedlockConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Real {@code redis-server} nodes for a JUnit 5 test class: the one way a test gets nodes. Register
 * it with {@code @RegisterExtension} on a {@code static} field (or on an instance field of a
 * {@code @TestInstance(PER_CLASS)} class, which a base class may fill from its constructor); under
 * {@code CI=true} a missing redis-server (or libfaketime, for clock faults) fails the test,
 * elsewhere it skips it ({@link Tools#requireOrSkip}).
 *
 * <p><b>Nodes per class</b> ({@link #perClass}, {@link #perClassBehindProxies}): started before the
 * class's tests and stopped after them. Before each test every node is running and answering
 * (killed ones restarted with the nodes' {@link Persistence}, paused ones resumed, links restored),
 * empty ({@code FLUSHALL}) and vouched for ({@link NodeData}); after each test the clients it made
 * through {@link #client} are closed and the nodes healed again.
 *
 * <pre>{@code
 * class PaymentsIT {
 *   @RegisterExtension
 *   static final RedisFixture redis = RedisFixture.perClass(RedisFixture.nodes(3));
 *
 *   @Test
 *   void paysOnce() {
 *     Redlock redlock = redis.client(redis.config().build()); // closed after the test
 *     redis.nodes().node(0).pause();                          // resumed before the next one
 *     ...
 *   }
 * }
 * }</pre>
 *
 * <p><b>Nodes started by a test</b> ({@link #start}, {@link #startBehindProxies}), for tests whose
 * nodes differ from one test to the next or must be new mid-test: they are stopped after the test
 * that started them (after the class if started in a {@code @BeforeAll}); a test may close them
 * earlier itself. {@link #manual()} registers a fixture with no nodes of its own, for them only.
 *
 * <pre>{@code
 * @RegisterExtension static final RedisFixture redis = RedisFixture.manual();
 *
 * @Test
 * void survivesASlowMinority() {
 *   FaultyNodes nodes = redis.startBehindProxies(RedisFixture.nodes(5).persistence(Persistence.AOF));
 *   nodes.latency(0, Duration.ofMillis(40));
 *   ...
 * }                                                        // the nodes are stopped, by PID
 * }</pre>
 *
 * <p>Every process is stopped by its PID ({@link RedisNodes}, {@link FaultyNodes}: the building
 * blocks this fixture stands on), on loopback ports only.
 */
public final class RedisFixture
    implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback {
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(RedisFixture.class);

  /** What nodes to start: how many, which binary, which persistence, which clocks. */
  public static final class Spec {
    // Package-private: read by StartedNodes, which starts the nodes of a spec.
    final int count;
    Supplier<RedisBinary> binary = RedisBinary::locate;
    Persistence persistence = Persistence.NONE;
    final Map<Integer, Double> clockRates = new TreeMap<>();
    boolean vouched = true;
    boolean tls;
    TlsFiles tlsFiles; // null: made when the nodes start

    private Spec(int count) {
      if (count < 1) {
        throw new IllegalArgumentException("nodes must be >= 1, was " + count);
      }
      this.count = count;
    }

    /**
     * The binary of every node without a clock rate (default {@link RedisBinary#locate()}; {@link
     * RedisBinary#embedded()} for Redis 6.2), looked up when the nodes start, so that a missing one
     * skips or fails the test as a missing redis-server does.
     *
     * @throws IllegalArgumentException if {@code binary} is null
     */
    public Spec binary(Supplier<RedisBinary> binary) {
      this.binary = nonNull(binary, "binary");
      return this;
    }

    /**
     * How the nodes keep their data across a restart (default {@link Persistence#NONE}), and how a
     * killed node comes back when the fixture heals it.
     *
     * @throws IllegalArgumentException if {@code persistence} is null
     */
    public Spec persistence(Persistence persistence) {
      this.persistence = nonNull(persistence, "persistence");
      return this;
    }

    /**
     * Runs node {@code index}'s clock at {@code rate} (2: twice as fast), on the binary of {@link
     * RedisBinary#withFastClock(double)}.
     *
     * @throws IllegalArgumentException if there is no node {@code index} or the rate is not {@code
     *     > 0}
     */
    public Spec clockRate(int index, double rate) {
      if (index < 0 || index >= count) {
        throw new IllegalArgumentException(
            "clockRate index must be 0.." + (count - 1) + ", was " + index);
      }
      if (!(rate > 0) || Double.isInfinite(rate)) {
        throw new IllegalArgumentException("clock rate must be > 0, was " + rate);
      }
      clockRates.put(index, rate);
      return this;
    }

    /**
     * Serves TLS on every node, with a certificate for {@code 127.0.0.1} from a CA made for the run
     * ({@link TlsFiles}; needs {@code openssl}): {@link RedisFixture#uris()} are then {@code
     * rediss://} and {@link RedisFixture#config()} trusts that CA. Not behind proxies; the 6.2
     * binary has no TLS.
     */
    public Spec tls() {
      this.tls = true;
      return this;
    }

    /**
     * Serves TLS as {@link #tls()} does, with {@code files} instead of a CA made for these nodes: a
     * certificate of {@link TlsFiles#withServerNames} that does not name {@code 127.0.0.1}, say.
     *
     * @throws IllegalArgumentException if {@code files} is null
     */
    public Spec tls(TlsFiles files) {
      this.tlsFiles = nonNull(files, "files");
      this.tls = true;
      return this;
    }

    /**
     * Leaves the new nodes' data unvouched for (it is vouched for by default, see {@link
     * NodeData}): the restart guard then keeps each node out of votes for {@code maxTtl}, as for a
     * node that came back empty. For tests of the guard itself.
     */
    public Spec unvouched() {
      this.vouched = false;
      return this;
    }

    @Override
    public String toString() {
      return count
          + " nodes, "
          + persistence
          + (clockRates.isEmpty() ? "" : ", clock rates " + clockRates)
          + (vouched ? "" : ", unvouched");
    }
  }

  private final Spec classSpec;
  private final boolean classProxies;
  private StartedNodes classNodes;

  /** What to close after the running test, newest first: its clients and the nodes it started. */
  private final List<AutoCloseable> afterTest = new ArrayList<>();

  /**
   * What to close after the class, newest first: the class's nodes, what was made outside tests.
   */
  private final List<AutoCloseable> afterClass = new ArrayList<>();

  private boolean inTest;
  private String testName;

  /** What closes {@link #afterClass} when JUnit closes the class's store; null before the class. */
  private ExtensionContext.Store.CloseableResource classScope;

  private RedisFixture(Spec classSpec, boolean classProxies) {
    this.classSpec = classSpec;
    this.classProxies = classProxies;
  }

  /** What to start: {@code count} nodes, on the default binary, without persistence. */
  public static Spec nodes(int count) {
    return new Spec(count);
  }

  /** A fixture with the nodes of {@code spec} per class, reached directly. */
  public static RedisFixture perClass(Spec spec) {
    return new RedisFixture(nonNull(spec, "spec"), false);
  }

  /**
   * A fixture with the nodes of {@code spec} per class, each behind TCP fault proxies ({@link
   * #faultyNodes()}).
   */
  public static RedisFixture perClassBehindProxies(Spec spec) {
    return new RedisFixture(nonNull(spec, "spec"), true);
  }

  /** A fixture without nodes of its own: the test classes start theirs ({@link #start}). */
  public static RedisFixture manual() {
    return new RedisFixture(null, false);
  }

  private static <T> T nonNull(T value, String name) {
    if (value == null) {
      throw new IllegalArgumentException(name + " must not be null");
    }
    return value;
  }

  /**
   * Skips the calling test (fails it under {@code CI=true}) unless a redis-server node starts here:
   * for a test whose code under test starts nodes of its own, an example's {@code main} say.
   */
  public static void requireRedisServer() {
    Tools.requireOrSkip(
        () -> {
          RedisNodes.start(1).close();
          return null;
        });
  }

  // ---- the class's nodes -------------------------------------------------------------------

  /** The class's nodes, reached directly (also those behind proxies: for process faults). */
  public RedisNodes nodes() {
    return classNodes().nodes;
  }

  /**
   * The class's nodes with their fault proxies.
   *
   * @throws IllegalStateException if they were not started behind proxies
   */
  public FaultyNodes faultyNodes() {
    StartedNodes started = classNodes();
    if (started.faulty == null) {
      throw new IllegalStateException(
          "the nodes are not behind proxies: use perClassBehindProxies");
    }
    return started.faulty;
  }

  /** The URIs clients of the class's nodes use, in node order (through the shared proxies). */
  public List<String> uris() {
    StartedNodes started = classNodes();
    return started.faulty != null ? started.faulty.uris() : started.nodes.uris();
  }

  /**
   * A configuration builder for clients of every one of the class's nodes ({@link #uris()}),
   * trusting their certificate when they serve TLS.
   */
  public RedlockConfig.Builder config() {
    RedlockConfig.Builder config = RedlockConfig.builder().nodes(uris());
    TlsFiles files = classNodes().tls;
    return files == null ? config : config.tlsSocketFactory(files.socketFactory());
  }

  /** The TLS files of the class's nodes, if they serve TLS ({@link Spec#tls()}). */
  public java.util.Optional<TlsFiles> tls() {
    return java.util.Optional.ofNullable(classNodes().tls);
  }

  /** How many of the class's nodes, running and not paused, hold {@code key}. */
  public long nodesWithKey(String key) {
    return classNodes().nodesWithKey(key);
  }

  private synchronized StartedNodes classNodes() {
    if (classNodes == null) {
      throw new IllegalStateException(
          classSpec == null
              ? "this fixture has no nodes of its own (manual()): start some with start(spec)"
              : "the class's nodes are not started: register the fixture on a static"
                  + " @RegisterExtension field");
    }
    return classNodes;
  }

  // ---- nodes and clients of a test ---------------------------------------------------------

  /**
   * The name of the running test's method (the last test's between two), for a lock resource of the
   * test's own, say.
   *
   * @throws IllegalStateException before the first test
   */
  public synchronized String testName() {
    if (testName == null) {
      throw new IllegalStateException("no test has started yet");
    }
    return testName;
  }

  /**
   * Starts the nodes of {@code spec}, reached directly, and waits until each answers PING; they are
   * stopped after the running test (after the class, outside a test).
   */
  public RedisNodes start(Spec spec) {
    return closeAfter(StartedNodes.start(nonNull(spec, "spec"), false)).nodes;
  }

  /**
   * Starts the nodes of {@code spec}, each behind TCP fault proxies, as {@link #start} does.
   *
   * @see FaultyNodes
   */
  public FaultyNodes startBehindProxies(Spec spec) {
    return closeAfter(StartedNodes.start(nonNull(spec, "spec"), true)).faulty;
  }

  /**
   * A Redlock with {@code config}, closed after the running test (after the class, outside one).
   */
  public Redlock client(RedlockConfig config) {
    return closeAfter(Redlock.create(config));
  }

  /**
   * Closes {@code resource} after the running test (after the class, outside a test), before the
   * nodes started before it. Returns {@code resource}.
   */
  public synchronized <T extends AutoCloseable> T closeAfter(T resource) {
    (inTest ? afterTest : afterClass).add(resource);
    return resource;
  }

  /**
   * Closes what the running test made through this fixture (its clients, the nodes it started),
   * newest first, then heals the class's nodes: what the fixture does after each test, for a class
   * that needs it done before its own {@code @AfterEach} clean-up. Idempotent.
   *
   * @throws IllegalStateException if closing something failed (the rest are closed all the same)
   */
  public void closeTestResources() {
    List<AutoCloseable> closing;
    synchronized (this) {
      closing = new ArrayList<>(afterTest);
      afterTest.clear();
    }
    closeNewestFirst(closing);
    StartedNodes started;
    synchronized (this) {
      started = classNodes;
    }
    if (started != null) {
      started.heal();
    }
  }

  private static void closeNewestFirst(List<AutoCloseable> closing) {
    IllegalStateException failure = null;
    for (int i = closing.size() - 1; i >= 0; i--) {
      try {
        closing.get(i).close();
      } catch (Exception e) {
        if (failure == null) {
          failure = new IllegalStateException("could not close " + closing.get(i), e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  // ---- JUnit's callbacks -------------------------------------------------------------------

  /** Starts the class's nodes, if this fixture has some (it is on a static field). */
  @Override
  public void beforeAll(ExtensionContext context) {
    startClass(context);
  }

  /**
   * Cleans the class's nodes: running, answering, empty and vouched for. A fixture on an instance
   * field has no {@code beforeAll}: it starts them before the instance's first test.
   */
  @Override
  public void beforeEach(ExtensionContext context) {
    StartedNodes started;
    synchronized (this) {
      started = classNodes;
    }
    if (!classStarted()) {
      boolean perClass =
          context.getTestInstanceLifecycle().orElse(Lifecycle.PER_METHOD) == Lifecycle.PER_CLASS;
      if (classSpec != null && !perClass) {
        throw new ExtensionConfigurationException(
            "a perClass RedisFixture goes on a static field, or on an instance field of a"
                + " @TestInstance(PER_CLASS) class");
      }
      started = startClass(perClass ? classContext(context) : context);
    }
    synchronized (this) {
      inTest = true;
      testName = context.getRequiredTestMethod().getName();
    }
    if (started != null) {
      started.clean();
    }
  }

  /** {@link #closeTestResources()}. */
  @Override
  public void afterEach(ExtensionContext context) {
    synchronized (this) {
      inTest = false;
    }
    closeTestResources();
  }

  /** Whether the class's scope is registered and its nodes, if it has some, run. */
  private synchronized boolean classStarted() {
    return classScope != null && (classSpec == null || classNodes != null);
  }

  /**
   * Has JUnit close what is made outside the tests when {@code scope} ends (the class, or the test
   * of a fixture that lives for one), and starts the class's nodes if this fixture has some.
   */
  private StartedNodes startClass(ExtensionContext scope) {
    ExtensionContext.Store.CloseableResource closing =
        () -> {
          List<AutoCloseable> made;
          synchronized (this) {
            made = new ArrayList<>(afterClass);
            afterClass.clear();
            classNodes = null;
            classScope = null;
          }
          closeNewestFirst(made);
        };
    synchronized (this) {
      classScope = closing;
    }
    scope.getStore(NAMESPACE).put(closing, closing);
    if (classSpec == null) {
      return null;
    }
    StartedNodes started = StartedNodes.start(classSpec, classProxies);
    synchronized (this) {
      classNodes = started;
      afterClass.add(started);
    }
    return started;
  }

  private static ExtensionContext classContext(ExtensionContext context) {
    ExtensionContext c = context;
    while (c.getTestMethod().isPresent()) {
      c = c.getParent().orElseThrow();
    }
    return c;
  }

  @Override
  public synchronized String toString() {
    return "RedisFixture"
        + (classSpec == null ? "(manual)" : "(" + classSpec + ")")
        + (classNodes == null ? "" : " " + classNodes.nodes);
  }
}
