-- Raise the fencing counter to at least ARGV[2], only while this acquisition holds the key.
-- KEYS[1] = lock key, KEYS[2] = its fencing counter;
-- ARGV[1] = owner token, ARGV[2] = token to reach, ARGV[3] = maxTtl in ms
-- Returns 1 if the counter is now >= ARGV[2], 0 if the key is not ours.
-- Sent before a token is handed out, only to winning nodes whose next vote might otherwise not
-- exceed it should this lease expire unreleased (docs/fencing.md).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local fence = tonumber(ARGV[2])
if (tonumber(redis.call('GET', KEYS[2])) or 0) < fence then
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('SET', KEYS[2], ARGV[2],
    'PX', string.format('%.0f', tonumber(ARGV[3]) + math.max(0, math.ceil((fence - now) / 1000))))
end
return 1
