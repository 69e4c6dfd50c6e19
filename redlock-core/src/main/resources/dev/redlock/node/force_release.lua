-- Force release (redlock release --force): delete the lock key whoever holds it, and raise the
-- resource's fencing counter to at least ARGV[1] and this node's clock + maxTtl, so the next grant
-- gets a larger token than the lease being broken.
-- KEYS[1] = lock key, KEYS[2] = its fencing counter; ARGV[1] = counter to reach (the largest any
-- node holds, '0' if none could be read),
-- ARGV[2] = maxTtl in ms. Returns 1 if the key was deleted, 0 if it was absent.
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
-- Past every token a holder can have, even one whose counters could not be read: a token is at
-- most the fastest node clock, and node clocks differ by less than maxTtl.
local fence = math.max(tonumber(ARGV[1]), now + tonumber(ARGV[2]) * 1000)
if (tonumber(redis.call('GET', KEYS[2])) or 0) < fence then
  redis.call('SET', KEYS[2], string.format('%.0f', fence),
    'PX', string.format('%.0f', tonumber(ARGV[2]) + math.ceil((fence - now) / 1000)))
end
local deleted = redis.call('DEL', KEYS[1])
if deleted == 1 then
  -- The same word on every node (-1: no lease's token), so waiters count a quorum of it and ask.
  redis.pcall('PUBLISH', KEYS[1], '-1')
end
return deleted
