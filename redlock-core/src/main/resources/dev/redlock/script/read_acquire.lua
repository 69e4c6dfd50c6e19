-- Read lock: the restart guard, then no writer and no writer intent mark, else nothing; then this
-- reader's entry with its expiry on this node's clock, and a fencing token from the lock's one
-- counter (the one writers draw from), in one round trip. Readers do not refuse each other.
-- KEYS[1] = the lock's writer key ('<keyPrefix>@rw:w:<name>', the writer's owner token, PX ttl),
-- KEYS[2] = life marker, KEYS[3] = the lock's one fencing counter (shared by reads and writes),
-- KEYS[4] = the restart guard's witness (as acquire.lua: the guard below is its text),
-- KEYS[5] = the lock's readers: a sorted set of reader owner token -> expiry (node clock, µs),
--           whose own PEXPIRE is kept at least as long as its latest entry,
-- KEYS[6] = the lock's writer intent mark (a writer waits: no new reader; PX of the writer's ttl).
-- ARGV: as acquire.lua (ARGV[1] = owner token, ARGV[2] = ttl in ms, ARGV[3] = maxTtl in ms,
-- ARGV[4] = guard on, ARGV[5..8] = this connection's process, appended per connection).
-- The keys live under '@rw:', where no resource name may reach (NodeKeys.checkResource): a plain
-- lock of the same name takes other keys and can never break this lock's rules.
-- Returns: token * 2 + ahead (> 0) if the lock was taken for reading (ahead as acquire.lua);
--          0 if a writer holds it or waits for it (intent mark); nothing is then written;
--          -(ms of quarantine left + 1) as acquire.lua.

if redis.replicate_commands then redis.replicate_commands() end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2]) -- µs; token * 2 stays exact in a double until 2112
local max_ttl = tonumber(ARGV[3]) * 1000

-- ---- restart guard: begin (the same text as acquire.lua's; ScriptTest checks it) ----
local life_key, witness_key, dry = KEYS[2], KEYS[4], false
--@include restart_guard.lua
-- ---- restart guard: end ----

if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[6]) == 1 then
  return 0
end
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', string.format('%.0f', now))
redis.call('ZADD', KEYS[5], string.format('%.0f', now + tonumber(ARGV[2]) * 1000), ARGV[1])
-- The set lives at least as long as its latest entry (this one, or an earlier longer one): it
-- never goes before a live reader's entry does.
if redis.call('PTTL', KEYS[5]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[5], ARGV[2])
end

--@include fencing_token.lua
