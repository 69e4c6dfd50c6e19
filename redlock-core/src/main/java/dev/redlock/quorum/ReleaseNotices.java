package dev.redlock.quorum;

import dev.redlock.internal.KeySubscription;
import dev.redlock.internal.LockNode;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Who waits to hear that a lock key was released, and each node's announcements of it (the release
 * script publishes on the key's name): a node's subscription starts with the first key anyone waits
 * for, and a key is subscribed while someone waits for it. Each node's announcement is passed on
 * separately, so a listener can wait for a quorum of them.
 */
final class ReleaseNotices implements AutoCloseable {
  private final List<LockNode> nodes;
  private final Map<String, CopyOnWriteArrayList<Runnable>> listeners =
      new HashMap<>(); // guarded by this
  private KeySubscription[] subscriptions; // guarded by this; made with the first listener
  private boolean closed; // guarded by this

  ReleaseNotices(List<LockNode> nodes) {
    this.nodes = nodes;
  }

  /** Runs {@code released} on every node's announcement that {@code key} was released. */
  synchronized AutoCloseable listen(String key, Runnable released) {
    if (closed) {
      return () -> {};
    }
    if (subscriptions == null) {
      subscriptions = new KeySubscription[nodes.size()];
      for (int i = 0; i < subscriptions.length; i++) {
        subscriptions[i] = nodes.get(i).listen(this::announced);
      }
    }
    CopyOnWriteArrayList<Runnable> forKey = listeners.get(key);
    if (forKey == null) {
      forKey = new CopyOnWriteArrayList<>();
      listeners.put(key, forKey);
      for (KeySubscription s : subscriptions) {
        if (s != null) {
          s.add(key);
        }
      }
    }
    forKey.add(released);
    return () -> stopListening(key, released);
  }

  private synchronized void stopListening(String key, Runnable released) {
    CopyOnWriteArrayList<Runnable> forKey = listeners.get(key);
    if (forKey == null || !forKey.remove(released) || !forKey.isEmpty()) {
      return;
    }
    listeners.remove(key);
    if (subscriptions != null && !closed) {
      for (KeySubscription s : subscriptions) {
        if (s != null) {
          s.remove(key);
        }
      }
    }
  }

  /** One node announced that {@code key} was released (on that node's subscription thread). */
  private void announced(String key) {
    CopyOnWriteArrayList<Runnable> forKey;
    synchronized (this) {
      forKey = listeners.get(key);
    }
    if (forKey != null) {
      forKey.forEach(Runnable::run);
    }
  }

  /** Closes every node's subscription; their threads end. */
  @Override
  public void close() {
    KeySubscription[] toClose;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      toClose = subscriptions;
      listeners.clear();
    }
    if (toClose != null) {
      for (KeySubscription s : toClose) {
        if (s != null) {
          s.close();
        }
      }
    }
  }
}
