-- Acquire several resources at once, all or none: the restart guard, then every key free or
-- nothing written, then SET PX on every key and one fencing token above every key's counter, in
-- one round trip (a script runs alone on its node: no other command sees a partial set).
-- KEYS: the first resource's keys where acquire.lua has them, so that the guard below is the same
-- text: KEYS[1] = its lock key, KEYS[2] = life marker, KEYS[3] = its fencing counter, KEYS[4] = the
-- restart guard's witness; then resource i (i >= 2) has its lock key at KEYS[2i+1] and its
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
local life_key, witness_key, dry = KEYS[2], KEYS[4], false
--@include restart_guard.lua
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
