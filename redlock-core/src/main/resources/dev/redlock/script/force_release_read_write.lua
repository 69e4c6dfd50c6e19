-- Force release of a read-write lock (redlock release --force --read-write): delete its writer
-- key, its readers and its writer intent mark, whoever holds them, and raise the lock's one
-- fencing counter with force_release.lua's own text (to at least ARGV[1] and this node's clock +
-- maxTtl), so that the next lease of either side gets a larger token than every lease broken:
-- readers and writers draw from that one counter. One script: no lease of the lock is granted
-- on this node between the raise and the deletes.
-- KEYS[1] = writer key, KEYS[2] = the lock's fencing counter (the writer key's), KEYS[3] =
-- readers (owner token -> expiry, node clock µs), KEYS[4] = writer intent mark;
-- ARGV[1] = counter to reach (the largest any node holds, '0' if none could be read),
-- ARGV[2] = maxTtl in ms.
-- Returns {writer key deleted (1/0), live readers removed, intent mark deleted (1/0)}.
--@include force_fence.lua
-- Live readers are the entries whose expiry is still ahead of this node's clock.
local readers = redis.call('ZCOUNT', KEYS[3], '(' .. string.format('%.0f', now), '+inf')
redis.call('DEL', KEYS[3])
return {redis.call('DEL', KEYS[1]), readers, redis.call('DEL', KEYS[4])}
