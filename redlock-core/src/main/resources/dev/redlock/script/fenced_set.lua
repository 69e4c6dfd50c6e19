-- Write a value only if the fencing token is newer than every token that wrote before.
-- KEYS[1] = the protected value's key (a hash: 'fence' and 'value'); ARGV[1] = token, ARGV[2] = value
-- Returns 1 if written, 0 if refused (a holder with an equal or newer token already wrote).
local current = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if tonumber(ARGV[1]) <= current then
  return 0
end
redis.call('HSET', KEYS[1], 'fence', ARGV[1], 'value', ARGV[2])
return 1
