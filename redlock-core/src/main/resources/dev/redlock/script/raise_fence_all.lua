-- Raise several resources' fencing counters to at least ARGV[2], only while this acquisition
-- holds every one of their keys (as raise_fence.lua, per key).
-- KEYS[1..n] = the lock keys, KEYS[n+1..2n] = their fencing counters, in the same order;
-- ARGV[1] = owner token, ARGV[2] = token to reach, ARGV[3] = maxTtl in ms.
-- Returns 1 if every counter is now >= ARGV[2], 0 if any key is not ours (nothing raised).
local n = #KEYS / 2
for i = 1, n do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return 0
  end
end
local fence = tonumber(ARGV[2])
local now
for i = 1, n do
  if (tonumber(redis.call('GET', KEYS[n + i])) or 0) < fence then
    if not now then
      if redis.replicate_commands then redis.replicate_commands() end
      local t = redis.call('TIME')
      now = tonumber(t[1]) * 1000000 + tonumber(t[2])
    end
    redis.call('SET', KEYS[n + i], ARGV[2],
      'PX', string.format('%.0f', tonumber(ARGV[3]) + math.max(0, math.ceil((fence - now) / 1000))))
  end
end
return 1
