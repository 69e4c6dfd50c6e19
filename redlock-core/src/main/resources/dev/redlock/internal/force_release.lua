-- Force release (redlock release --force): delete the lock key whoever holds it, and raise the
-- resource's fencing counter to at least ARGV[1], so the next grant gets a larger token than the
-- lease being broken (RedlockAdmin.forceRelease says how ARGV[1] is chosen).
-- KEYS[1] = lock key, KEYS[2] = its fencing counter; ARGV[1] = counter to reach ('0': none),
-- ARGV[2] = maxTtl in ms. Returns 1 if the key was deleted, 0 if it was absent.
if redis.replicate_commands then redis.replicate_commands() end
local fence = tonumber(ARGV[1])
if fence > 0 and (tonumber(redis.call('GET', KEYS[2])) or 0) < fence then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('SET', KEYS[2], ARGV[1],
    'PX', string.format('%.0f', tonumber(ARGV[2]) + math.max(0, math.ceil((fence - now) / 1000))))
end
return redis.call('DEL', KEYS[1])
