if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
-- Past every token a holder can have, even one whose counters could not be read: ARGV[1] is the
-- largest counter read, and a token from a node that could not be read is at most the fastest
-- node clock (node clocks differ by less than maxTtl), except within maxTtl of an earlier break,
-- whose raise runs counters up to maxTtl ahead (docs/fencing.md says what that leaves open).
local fence = math.max(tonumber(ARGV[1]), now + tonumber(ARGV[2]) * 1000)
if (tonumber(redis.call('GET', KEYS[2])) or 0) < fence then
  redis.call('SET', KEYS[2], string.format('%.0f', fence),
    'PX', string.format('%.0f', tonumber(ARGV[2]) + math.ceil((fence - now) / 1000)))
end
