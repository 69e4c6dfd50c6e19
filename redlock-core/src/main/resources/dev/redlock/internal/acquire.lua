-- Acquire: the restart guard, SET NX PX, and the fencing counter, in one round trip.
-- KEYS[1] = lock key, KEYS[2] = epoch marker, KEYS[3] = fencing counters (a hash, field = lock key)
-- ARGV[1] = owner token, ARGV[2] = ttl in ms, ARGV[3] = maxTtl in ms, ARGV[4] = '1' if the guard is on
-- Returns: the fencing counter (> 0) if the lock was taken; 0 if the key is held;
--          -(ms of quarantine left + 1) if the node's data is too young to vote.

-- Redis 6.2 replicates scripts verbatim unless told otherwise; TIME before a write needs
-- effects replication (the default since 5.0; on 7 this call is a no-op).
if redis.replicate_commands then redis.replicate_commands() end

local t = redis.call('TIME')
-- Microseconds as a string first: exact, whatever Lua does with large numbers.
local now_text = t[1] .. string.format('%06d', tonumber(t[2]))
local now = tonumber(now_text)

-- The epoch marker has no ttl: it says when this node's current data began, on its own clock.
-- A node that lost its data (restart without persistence, FLUSHALL) lost the marker too, so
-- its data is young until maxTtl has passed: every lock it might have forgotten has expired.
local epoch = tonumber(redis.call('GET', KEYS[2]))
if not epoch then
  redis.call('SET', KEYS[2], now_text)
  epoch = now
end
if ARGV[4] == '1' then
  local left = tonumber(ARGV[3]) * 1000 - (now - epoch)
  if left > 0 then
    return -(math.floor(left / 1000) + 1)
  end
end

if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end

-- The counter never expires and only grows. A missing counter (new resource, or lost data)
-- starts at the node's clock in microseconds, rounded down to a grain (at most 1 s and a quarter
-- of maxTtl) so that nodes with synchronised clocks start a new resource at the same value and no
-- write-back is needed. After the quarantine it is still past every token handed out before a
-- data loss, as long as node clocks differ by less than maxTtl minus the grain.
if redis.call('HEXISTS', KEYS[3], KEYS[1]) == 1 then
  return redis.call('HINCRBY', KEYS[3], KEYS[1], 1)
end
local grain = math.min(math.floor(tonumber(ARGV[3]) * 1000 / 4), 1048576)
local start = now - (now % grain)
redis.call('HSET', KEYS[3], KEYS[1], string.format('%.0f', start))
return start
