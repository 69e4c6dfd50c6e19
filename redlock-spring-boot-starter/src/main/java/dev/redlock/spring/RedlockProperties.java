package dev.redlock.spring;

import static java.util.stream.Collectors.joining;

import dev.redlock.config.RedlockConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code redlock.*} properties of a Spring application: every setting of {@code
 * docs/configuration.md}, plus which store keeps the leases.
 *
 * <p>The settings are bound as text and handed to the core ({@link
 * RedlockConfig.Builder#properties}), which parses and checks them: a bad value fails the context's
 * start with the core's message, naming the key and the rule. Spring's relaxed names apply ({@code
 * redlock.node-timeout}, {@code redlock.nodeTimeout}, {@code REDLOCK_NODETIMEOUT}); a key under
 * {@code redlock.} that is none of these is an error, so a typo never falls back to a default
 * silently.
 */
@ConfigurationProperties(prefix = "redlock", ignoreUnknownFields = false)
public class RedlockProperties {

  /** Which store keeps the leases. */
  public enum Store {
    /** A quorum of independent Redis nodes ({@code redlock.nodes}): the Redlock algorithm. */
    REDIS,
    /** A table in the application's {@code DataSource} ({@code redlock-jdbc}). */
    JDBC
  }

  /** Whether to configure a Redlock at all (default true). */
  private boolean enabled = true;

  /** Which store keeps the leases: redis (default) or jdbc. */
  private Store store = Store.REDIS;

  /**
   * The Redis nodes, comma separated or as a list: redis://[user:password@]host[:port][/db], or
   * rediss:// for TLS. Required for the redis store. Use 3 or 5 independent masters.
   */
  private List<String> nodes = new ArrayList<>();

  /** How many nodes must agree (default N/2+1); may be raised up to N, never below a majority. */
  private String quorum;

  /** The prefix put before every resource name to form the key (default redlock:). */
  private String keyPrefix;

  /** How much node clocks may drift, as a fraction of the ttl, in [0, 0.5) (default 0.01). */
  private String clockDriftFactor;

  /** Bound on one request to one node and on one round of votes, 1ms to 1m (default 50ms). */
  private String nodeTimeout;

  /** Base pause between attempts while waiting for a lock, at least 1ms (default 200ms). */
  private String retryDelay;

  /** Random extra pause added to each retry, at least 0 (default 100ms). */
  private String retryJitter;

  /**
   * Acquisition attempts of this Redlock on the store at once, 1 to 65536 (default 8 per processor,
   * at most 64); more wait their turn before their attempt starts.
   */
  private String maxAttemptsInFlight;

  /** Connections to each node, shared by every caller, 1 to 64 (default 4). */
  private String maxConnectionsPerNode;

  /** Bound on each step of making one connection to a node, 1ms to 1m (default 2s). */
  private String connectTimeout;

  /** Renewed leases are extended every ttl x this fraction, in (0, 0.5] (default 1/3). */
  private String renewalFraction;

  /** Longest a renewed lease is kept alive; then it is lost by policy (default 1h). */
  private String maxHold;

  /** Whether a lost lease interrupts the locked method: ON_LEASE_LOSS (default) or NEVER. */
  private String taskInterruption;

  /**
   * Longest ttl any client may use, and how long a restarted or new node stays out of votes, 1ms to
   * 1d (default 1m). The same on every client.
   */
  private String maxTtl;

  /**
   * What the restart guard trusts: on (default), trust_fsynced_aof_restarts, or off; see
   * docs/fencing.md before changing it.
   */
  private String restartGuard;

  /** Whether to write the audit trail (logger dev.redlock.audit) (default false). */
  private String auditLog;

  /** The jdbc store's settings. */
  private final Jdbc jdbc = new Jdbc();

  /** The {@code redlock.jdbc.*} settings: leases in a table of the application's DataSource. */
  public static class Jdbc {
    /** The lease table (default redlock_leases). */
    private String table = "redlock_leases";

    /**
     * Bound on every statement and on the wait for a pooled connection (default 2s; the core's
     * timeout rule: 1ms to 1m; statements round it to whole seconds, at least 1); a ttl must be at
     * least 3 times it to renew.
     */
    private Duration timeout = Duration.ofSeconds(2);

    /** Whether to create the table and its sequence at start-up if absent (default false). */
    private boolean createTable;

    /** The lease table. */
    public String getTable() {
      return table;
    }

    /** Sets the lease table. */
    public void setTable(String table) {
      this.table = table;
    }

    /** The statement timeout. */
    public Duration getTimeout() {
      return timeout;
    }

    /** Sets the statement timeout. */
    public void setTimeout(Duration timeout) {
      this.timeout = timeout;
    }

    /** Whether to create the table at start-up. */
    public boolean isCreateTable() {
      return createTable;
    }

    /** Sets whether to create the table at start-up. */
    public void setCreateTable(boolean createTable) {
      this.createTable = createTable;
    }
  }

  /**
   * The settings as the core's {@code redlock.*} keys ({@link RedlockConfig#propertyKeys()}), with
   * only those that were set: the core applies its defaults to the others. Each key is read from
   * the property of the same name here, so the core's list of keys is the only one.
   */
  public Properties coreProperties() {
    Properties core = new Properties();
    BeanWrapper here = new BeanWrapperImpl(this);
    for (String key : RedlockConfig.propertyKeys()) {
      Object value = here.getPropertyValue(key.substring("redlock.".length()));
      if (value instanceof List<?> list) {
        value = list.isEmpty() ? null : list.stream().map(String::valueOf).collect(joining(","));
      }
      if (value != null) {
        core.setProperty(key, (String) value);
      }
    }
    return core;
  }

  /** Whether a Redlock is configured. */
  public boolean isEnabled() {
    return enabled;
  }

  /** Sets whether a Redlock is configured. */
  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /** Which store keeps the leases. */
  public Store getStore() {
    return store;
  }

  /** Sets which store keeps the leases. */
  public void setStore(Store store) {
    this.store = store;
  }

  /** The Redis nodes. */
  public List<String> getNodes() {
    return nodes;
  }

  /** Sets the Redis nodes. */
  public void setNodes(List<String> nodes) {
    this.nodes = nodes == null ? new ArrayList<>() : new ArrayList<>(nodes);
  }

  /** The quorum, as written. */
  public String getQuorum() {
    return quorum;
  }

  /** Sets the quorum. */
  public void setQuorum(String quorum) {
    this.quorum = quorum;
  }

  /** The key prefix, as written. */
  public String getKeyPrefix() {
    return keyPrefix;
  }

  /** Sets the key prefix. */
  public void setKeyPrefix(String keyPrefix) {
    this.keyPrefix = keyPrefix;
  }

  /** The clock-drift factor, as written. */
  public String getClockDriftFactor() {
    return clockDriftFactor;
  }

  /** Sets the clock-drift factor. */
  public void setClockDriftFactor(String clockDriftFactor) {
    this.clockDriftFactor = clockDriftFactor;
  }

  /** The node timeout, as written. */
  public String getNodeTimeout() {
    return nodeTimeout;
  }

  /** Sets the node timeout. */
  public void setNodeTimeout(String nodeTimeout) {
    this.nodeTimeout = nodeTimeout;
  }

  /** The retry delay, as written. */
  public String getRetryDelay() {
    return retryDelay;
  }

  /** Sets the retry delay. */
  public void setRetryDelay(String retryDelay) {
    this.retryDelay = retryDelay;
  }

  /** The most attempts in flight, as written. */
  public String getMaxAttemptsInFlight() {
    return maxAttemptsInFlight;
  }

  /** Sets the most attempts in flight. */
  public void setMaxAttemptsInFlight(String maxAttemptsInFlight) {
    this.maxAttemptsInFlight = maxAttemptsInFlight;
  }

  /** The retry jitter, as written. */
  public String getRetryJitter() {
    return retryJitter;
  }

  /** Sets the retry jitter. */
  public void setRetryJitter(String retryJitter) {
    this.retryJitter = retryJitter;
  }

  /** The connections per node, as written. */
  public String getMaxConnectionsPerNode() {
    return maxConnectionsPerNode;
  }

  /** Sets the connections per node. */
  public void setMaxConnectionsPerNode(String maxConnectionsPerNode) {
    this.maxConnectionsPerNode = maxConnectionsPerNode;
  }

  /** The connect timeout, as written. */
  public String getConnectTimeout() {
    return connectTimeout;
  }

  /** Sets the connect timeout. */
  public void setConnectTimeout(String connectTimeout) {
    this.connectTimeout = connectTimeout;
  }

  /** The renewal fraction, as written. */
  public String getRenewalFraction() {
    return renewalFraction;
  }

  /** Sets the renewal fraction. */
  public void setRenewalFraction(String renewalFraction) {
    this.renewalFraction = renewalFraction;
  }

  /** The longest hold, as written. */
  public String getMaxHold() {
    return maxHold;
  }

  /** Sets the longest hold. */
  public void setMaxHold(String maxHold) {
    this.maxHold = maxHold;
  }

  /** The task interruption, as written. */
  public String getTaskInterruption() {
    return taskInterruption;
  }

  /** Sets the task interruption. */
  public void setTaskInterruption(String taskInterruption) {
    this.taskInterruption = taskInterruption;
  }

  /** The longest ttl, as written. */
  public String getMaxTtl() {
    return maxTtl;
  }

  /** Sets the longest ttl. */
  public void setMaxTtl(String maxTtl) {
    this.maxTtl = maxTtl;
  }

  /** What the restart guard trusts, as written. */
  public String getRestartGuard() {
    return restartGuard;
  }

  /** Sets what the restart guard trusts. */
  public void setRestartGuard(String restartGuard) {
    this.restartGuard = restartGuard;
  }

  /** Whether to write the audit trail, as written. */
  public String getAuditLog() {
    return auditLog;
  }

  /** Sets whether to write the audit trail. */
  public void setAuditLog(String auditLog) {
    this.auditLog = auditLog;
  }

  /** The jdbc store's settings. */
  public Jdbc getJdbc() {
    return jdbc;
  }
}
