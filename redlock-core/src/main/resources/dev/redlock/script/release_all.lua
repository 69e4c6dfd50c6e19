-- Release several resources at once: per key, owner-checked as release.lua (delete only a key
-- that still holds this acquisition's token, and raise its fencing counter to the token handed
-- out). A key another owner holds now is left alone, whatever the others.
-- KEYS[1..n] = the lock keys, KEYS[n+1..2n] = their fencing counters, in the same order;
-- ARGV[1] = owner token, ARGV[2] = fencing token handed out ('0' for a rolled-back attempt),
-- ARGV[3] = maxTtl in ms. Returns how many keys were deleted. Deterministic (no TIME).
-- Each key released (not rolled back) is published as release.lua does.
local n = #KEYS / 2
local fence = tonumber(ARGV[2])
local deleted = 0
for i = 1, n do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    if fence > 0 then
      local stored = tonumber(redis.call('GET', KEYS[n + i]))
      if not stored then
        redis.call('SET', KEYS[n + i], ARGV[2], 'PX', ARGV[3])
      elseif stored < fence then
        redis.call('SET', KEYS[n + i], ARGV[2], 'KEEPTTL')
      end
    end
    deleted = deleted + redis.call('DEL', KEYS[i])
    if fence > 0 then
      redis.pcall('PUBLISH', KEYS[i], ARGV[2])
    end
  end
end
return deleted
