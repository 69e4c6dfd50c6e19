-- Extend: make the key live at least ARGV[2] ms more, only if it still holds this acquisition's
-- token. Never shortens it: a key that lives less than its lease believes would let another owner
-- in early, and the fencing argument counts on a key living its full ttl (docs/fencing.md).
-- KEYS[1] = lock key, ARGV[1] = owner token, ARGV[2] = new ttl in milliseconds.
-- Returns 1 if the key is ours (its ttl is now at least ARGV[2]), 0 otherwise.
-- Owner-checked in one script: renewing without the check (a seed's mistake) would keep
-- alive a lock that another owner now holds.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
