package dev.redlock.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.redlock.internal.TokenHash;
import org.junit.jupiter.api.Test;

class NodeRequestTest {
  @Test
  void toStringNamesTheOwnerByItsHashNeverByItsToken() {
    String token = "0123456789abcdef0123456789abcdef";
    NodeRequest request = new NodeRequest(NodeRequest.Verb.RELEASE, "redlock:r", token, 7);
    assertFalse(request.toString().contains(token), request.toString());
    assertEquals(
        "RELEASE redlock:r owner=" + TokenHash.of(token) + " argument=7", request.toString());
  }
}
