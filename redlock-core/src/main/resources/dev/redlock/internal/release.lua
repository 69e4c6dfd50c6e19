-- Release: delete the lock key only if it still holds this acquisition's token, and raise the
-- resource's fencing counter to the token handed out, so the next grant here gets a larger one.
-- KEYS[1] = lock key, KEYS[2] = its fencing counter
-- ARGV[1] = owner token, ARGV[2] = fencing token handed out ('0' for a rolled-back attempt),
-- ARGV[3] = maxTtl in ms. Returns 1 if deleted, 0 otherwise.
-- Compare-then-act in one script, so a key that expired and was taken by another owner
-- between our GET and DEL can never be deleted by us (the seeds' "blind DEL" mistake).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local fence = tonumber(ARGV[2])
if fence > 0 and (tonumber(redis.call('GET', KEYS[2])) or 0) < fence then
  if redis.replicate_commands then redis.replicate_commands() end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('SET', KEYS[2], ARGV[2],
    'PX', string.format('%.0f', tonumber(ARGV[3]) + math.max(0, math.ceil((fence - now) / 1000))))
end
return redis.call('DEL', KEYS[1])
