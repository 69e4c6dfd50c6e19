-- Extend: set a new time to live only if the key still holds this acquisition's token.
-- KEYS[1] = lock key, ARGV[1] = owner token, ARGV[2] = new ttl in milliseconds.
-- Owner-checked in one script: renewing without the check (a seed's mistake) would keep
-- alive a lock that another owner now holds.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
