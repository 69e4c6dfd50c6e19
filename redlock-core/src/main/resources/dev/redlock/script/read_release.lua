-- Release a read lease: remove this reader's entry only if it is there (owner-checked: another
-- reader's entry is never touched), and raise the lock's one fencing counter to the token handed
-- out, as release.lua does, so that the next writer here gets a larger one (docs/fencing.md).
-- KEYS[1] = the lock's readers (see read_acquire.lua), KEYS[2] = the lock's fencing counter;
-- ARGV[1] = owner token, ARGV[2] = fencing token handed out ('0' for a rolled-back attempt),
-- ARGV[3] = maxTtl in ms. Returns 1 if removed, 0 otherwise. Deterministic (no TIME).
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
local fence = tonumber(ARGV[2])
if fence > 0 then
  local stored = tonumber(redis.call('GET', KEYS[2]))
  if not stored then
    redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
  elseif stored < fence then
    redis.call('SET', KEYS[2], ARGV[2], 'KEEPTTL')
  end
end
return redis.call('ZREM', KEYS[1], ARGV[1])
