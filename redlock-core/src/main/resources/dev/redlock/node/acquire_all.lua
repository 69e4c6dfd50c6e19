-- Acquire several resources at once, all or none: the restart guard, then every key free or
-- nothing written, then SET PX on every key and one fencing token above every key's counter, in
-- one round trip (a script runs alone on its node: no other command sees a partial set).
-- KEYS: the first resource's keys where acquire.lua has them, so that the guard below is the same
-- text: KEYS[1] = its lock key, KEYS[2] = life marker, KEYS[3] = its fencing counter, KEYS[4] = the
-- previous version's epoch marker; then resource i (i >= 2) has its lock key at KEYS[2i+1] and its
-- fencing counter at KEYS[2i+2]. The lock keys and counters are those a single-resource lock of
-- that resource uses, so the two exclude each other.
-- ARGV: as acquire.lua (ARGV[1] = owner token, ARGV[2] = ttl in ms, ARGV[3] = maxTtl in ms,
-- ARGV[4] = guard on, ARGV[5..8] = this connection's process, appended per connection).
-- Returns: token * 2 + ahead (> 0) if every key was taken, the token larger than every one of
--          their counters and at least this node's clock (ahead = 1 when it came from a counter);
--          0 if any key is held (nothing written); -(ms of quarantine left + 1) as acquire.lua.

if redis.replicate_commands then redis.replicate_commands() end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2]) -- µs; token * 2 stays exact in a double until 2112
local max_ttl = tonumber(ARGV[3]) * 1000

-- ---- restart guard: begin (the same text as acquire.lua's; ScriptTest checks it) ----
-- The life marker '<run_id>:<durable>:<epoch µs>' says which process life stamped this dataset
-- and from when its data is trusted. A dataset this process did not stamp was loaded (a restart
-- from an RDB or AOF, a copied dump.rdb) or restored from another life: it may lack leases this
-- node granted, so it is trusted only from now, unless both lives keep every acknowledged write.
local life = redis.call('GET', KEYS[2])
local epoch = life and string.find(life, ARGV[5], 1, true) == 1 and tonumber(string.sub(life, 44))
if epoch then
  if ARGV[6] == '0' and string.sub(life, 42, 42) == '1' then
    -- This life stopped promising durability (or this client cannot confirm it): a restart
    -- after this point is not trusted. Never upgraded back within a life.
    redis.call('SET', KEYS[2], ARGV[5] .. ':0:' .. string.sub(life, 44))
  end
else
  local started = tonumber(ARGV[7])
  -- (started is computed from a whole-second uptime: up to 1 s late, hence the second here)
  if life and string.sub(life, 42, 42) == '1' and ARGV[8] == '1' and started >= 0
      and now - started + 1000000 < max_ttl then
    -- Both the life that stamped it and this one keep every acknowledged write (AOF, fsync
    -- always), this one loaded it from its AOF at start, and this is its first acquire since:
    -- a restart that lost nothing, so the old epoch still holds. Later in a life, a marker of
    -- another life can only have been restored: not trusted.
    epoch = tonumber(string.sub(life, 44))
  elseif not life and started >= 0 and now - started >= max_ttl
      and redis.call('EXISTS', KEYS[4]) == 1 then
    -- Upgrade from the previous version's marker on a process up for longer than maxTtl: any
    -- lease a restart made it forget has expired; the old marker still counts for a flush.
    epoch = math.max(tonumber(redis.call('GET', KEYS[4])) or now, started)
  end
  epoch = epoch or now
  redis.call('SET', KEYS[2], ARGV[5] .. ':' .. ARGV[6] .. ':' .. string.format('%.0f', epoch))
end
if ARGV[4] == '1' then
  local left = max_ttl - (now - epoch)
  if left > 0 then
    return -(math.floor(left / 1000) + 1)
  end
end
-- ---- restart guard: end ----

local n = (#KEYS - 2) / 2
local function lock_key(i)
  if i == 1 then return KEYS[1] end
  return KEYS[2 * i + 1]
end
local function fence_key(i)
  if i == 1 then return KEYS[3] end
  return KEYS[2 * i + 2]
end

-- All or none: look at every key before writing any, so a refusal leaves nothing behind and two
-- clients asking for overlapping sets in any order can only refuse each other, never wait.
for i = 1, n do
  if redis.call('EXISTS', lock_key(i)) == 1 then
    return 0
  end
end

-- Every key with the ttl, every counter to the clock (as acquire.lua's usual case), keeping the
-- largest counter replaced; then, if one was at or ahead of the clock, every counter to one
-- above it. Within this script, so no command ever sees the values in between.
local clock = t[1] .. string.sub('00000' .. t[2], -6)
local largest = -1
for i = 1, n do
  redis.call('SET', lock_key(i), ARGV[1], 'PX', ARGV[2])
  local counter = tonumber(redis.call('SET', fence_key(i), clock, 'PX', ARGV[3], 'GET'))
  if counter and counter > largest then
    largest = counter
  end
end
if largest >= now then
  local token = largest + 1
  local text = string.format('%.0f', token)
  local px = string.format('%.0f', tonumber(ARGV[3]) + math.ceil((token - now) / 1000))
  for i = 1, n do
    redis.call('SET', fence_key(i), text, 'PX', px)
  end
  return token * 2 + 1
end
return now * 2
