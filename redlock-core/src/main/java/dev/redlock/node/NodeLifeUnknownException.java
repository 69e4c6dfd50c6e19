package dev.redlock.node;

/**
 * A node's vote cannot count because this client cannot tell whether the node restarted (its ACL
 * refuses {@code INFO}). The message says what to grant.
 */
public final class NodeLifeUnknownException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  NodeLifeUnknownException(String message) {
    super(message, null, false, false);
  }
}
