-- Raise the lock's fencing counter to at least ARGV[2], only while this reader's entry is there
-- and unexpired on this node's clock (as raise_fence.lua does for a lock key).
-- KEYS[1] = the lock's readers (see read_acquire.lua), KEYS[2] = the lock's fencing counter;
-- ARGV[1] = owner token, ARGV[2] = token to reach, ARGV[3] = maxTtl in ms.
-- Returns 1 if the counter is now >= ARGV[2], 0 if the entry is not ours.
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local expiry = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]))
if not expiry or expiry <= now then
  return 0
end
local fence = tonumber(ARGV[2])
if (tonumber(redis.call('GET', KEYS[2])) or 0) < fence then
  redis.call('SET', KEYS[2], ARGV[2],
    'PX', string.format('%.0f', tonumber(ARGV[3]) + math.max(0, math.ceil((fence - now) / 1000))))
end
return 1
