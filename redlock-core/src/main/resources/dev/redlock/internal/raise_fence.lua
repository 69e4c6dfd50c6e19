-- Raise the fencing counter to at least ARGV[2], only while this acquisition holds the key.
-- KEYS[1] = lock key, KEYS[2] = fencing counters; ARGV[1] = owner token, ARGV[2] = token to reach
-- Returns 1 if the counter is now >= ARGV[2], 0 if the key is not ours.
-- Sent only to winning nodes that lag behind the token we are about to hand out, so that a
-- quorum holds a counter at least that large before anyone sees it (docs/fencing.md).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local stored = tonumber(redis.call('HGET', KEYS[2], KEYS[1]) or '0')
if stored < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[2], KEYS[1], ARGV[2])
end
return 1
