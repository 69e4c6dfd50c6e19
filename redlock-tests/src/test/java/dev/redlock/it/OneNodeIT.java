package dev.redlock.it;

import dev.redlock.testkit.RedisFixture;
import org.junit.jupiter.api.Tag;

/**
 * The lease contract and the Redis-only tests on a single node: no fault tolerance, but every rule
 * of ownership and expiry.
 */
@Tag("full") // The lease contract on 1 node: the full tier (the default runs it on 3).
class OneNodeIT extends RedisQuorumContract {
  OneNodeIT() {
    super(RedisFixture.nodes(1));
  }
}
