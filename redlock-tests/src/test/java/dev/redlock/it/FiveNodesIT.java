package dev.redlock.it;

import dev.redlock.testkit.RedisFixture;
import org.junit.jupiter.api.Tag;

/** The lease contract and the Redis-only tests on five nodes: two may fail. */
@Tag("full") // The lease contract on 5 nodes: the full tier (the default runs it on 3).
class FiveNodesIT extends RedisQuorumContract {
  FiveNodesIT() {
    super(RedisFixture.nodes(5));
  }
}
