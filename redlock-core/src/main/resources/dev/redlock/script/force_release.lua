-- Force release (redlock release --force): delete the lock key whoever holds it, and raise the
-- resource's fencing counter to at least ARGV[1] and this node's clock + maxTtl, so the next grant
-- gets a larger token than the lease being broken.
-- KEYS[1] = lock key, KEYS[2] = its fencing counter; ARGV[1] = counter to reach (the largest any
-- node holds, '0' if none could be read),
-- ARGV[2] = maxTtl in ms. Returns 1 if the key was deleted, 0 if it was absent.
--@include force_fence.lua
local deleted = redis.call('DEL', KEYS[1])
if deleted == 1 then
  -- The same word on every node (-1: no lease's token), so waiters count a quorum of it and ask.
  redis.pcall('PUBLISH', KEYS[1], '-1')
end
return deleted
