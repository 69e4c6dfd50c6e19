-- The token is at least this node's clock, so a counter lost with old data, expired or deleted
-- cannot make it go back (docs/fencing.md). The counter is kept for maxTtl past the clock: it
-- guards against the clock stepping back, and then goes away by itself.
-- The usual case, a counter behind the clock, is one call: SET ... GET writes the clock (as text
-- without string.format, the cheapest exact way: seconds, then 6 digits of µs) and returns the
-- counter it replaced. A counter at or ahead of the clock is then written back above itself,
-- within this same script, so no other command ever sees the clock value in between.
local counter = tonumber(redis.call('SET', KEYS[3], t[1] .. string.sub('00000' .. t[2], -6),
  'PX', ARGV[3], 'GET'))
if counter and counter >= now then
  local token = counter + 1
  redis.call('SET', KEYS[3], string.format('%.0f', token),
    'PX', string.format('%.0f', tonumber(ARGV[3]) + math.ceil((token - now) / 1000)))
  return token * 2 + 1
end
return now * 2
