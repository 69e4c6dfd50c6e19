-- Write lock: the restart guard, then no writer and no live reader, else nothing but a writer
-- intent mark; then SET PX on the writer key and a fencing token from the lock's one counter, in
-- one round trip (a script runs alone on its node: no reader can come in between the check and the
-- write).
-- KEYS[1] = the lock's writer key ('<keyPrefix>@rw:w:<name>', the writer's owner token, PX ttl),
-- KEYS[2] = life marker, KEYS[3] = the lock's one fencing counter (shared by reads and writes),
-- KEYS[4] = the restart guard's witness (as acquire.lua: the guard below is its text),
-- KEYS[5] = the lock's readers: a sorted set of reader owner token -> expiry (node clock, µs),
--           whose own PEXPIRE is kept at least as long as its latest entry,
-- KEYS[6] = the lock's writer intent mark (a writer waits: no new reader while it lives).
-- ARGV: as acquire.lua (ARGV[1] = owner token, ARGV[2] = ttl in ms, ARGV[3] = maxTtl in ms,
-- ARGV[4] = guard on, ARGV[5..8] = this connection's process, appended per connection),
-- ARGV[9] = how long a refusal keeps new readers out, ms: until this writer asks again (it waits
--           that long at most), never longer than its ttl; 0 for a writer that will not ask again.
-- The keys live under '@rw:', where no resource name may reach (NodeKeys.checkResource): a plain
-- lock of the same name takes other keys and can never break this lock's rules.
-- Returns: token * 2 + ahead (> 0) if the lock was taken for writing (ahead as acquire.lua);
--          0 if a writer holds it or a reader does (a writer intent mark is then left);
--          -(ms of quarantine left + 1) as acquire.lua.

if redis.replicate_commands then redis.replicate_commands() end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2]) -- µs; token * 2 stays exact in a double until 2112
local max_ttl = tonumber(ARGV[3]) * 1000

-- ---- restart guard: begin (the same text as acquire.lua's; ScriptTest checks it) ----
local life_key, witness_key, dry = KEYS[2], KEYS[4], false
--@include restart_guard.lua
-- ---- restart guard: end ----

-- Writer preference: a writer refused leaves a mark that refuses new readers (read_acquire.lua)
-- until it asks again, so a stream of readers cannot keep it out; never shortened by another's.
local function mark_intent()
  local intent = tonumber(ARGV[9])
  if intent > 0 and redis.call('PTTL', KEYS[6]) < intent then
    redis.call('SET', KEYS[6], '1', 'PX', ARGV[9])
  end
  return 0
end

if redis.call('EXISTS', KEYS[1]) == 1 then
  return mark_intent()
end
-- A reader's entry counts until its expiry on this node's clock: purge the expired ones, then
-- any entry left is a live reader.
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', string.format('%.0f', now))
if redis.call('EXISTS', KEYS[5]) == 1 then
  return mark_intent()
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
-- In: the writer key itself now keeps readers out; the next writer marks again if it must wait.
redis.call('DEL', KEYS[6])

--@include fencing_token.lua
