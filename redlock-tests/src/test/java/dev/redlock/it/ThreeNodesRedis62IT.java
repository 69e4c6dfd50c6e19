package dev.redlock.it;

import dev.redlock.testkit.RedisBinary;
import dev.redlock.testkit.RedisFixture;
import org.junit.jupiter.api.Tag;

/**
 * The lease contract and the Redis-only tests on three Redis 6.2 nodes (the binary embedded-redis
 * ships), to keep 6.2 working.
 */
@Tag("full") // The lease contract on Redis 6.2: the full tier.
class ThreeNodesRedis62IT extends RedisQuorumContract {
  ThreeNodesRedis62IT() {
    super(RedisFixture.nodes(3).binary(RedisBinary::embedded));
  }
}
