-- What the restart guard's next acquire on this node would decide, writing nothing: for redlock
-- status and doctor. KEYS[1] = life marker, KEYS[2] = witness; ARGV as acquire.lua's (ARGV[1] and
-- ARGV[2] unused, ARGV[4] = '1').
-- Returns {ms of quarantine the next acquire would answer (0: it votes), why (restart_guard.lua),
--          the marker or false}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local max_ttl = tonumber(ARGV[3]) * 1000
local life_key, witness_key, dry = KEYS[1], KEYS[2], true
--@include restart_guard.lua
return {math.max(0, math.ceil(left / 1000)), why, life or false}
