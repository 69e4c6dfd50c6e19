-- Acquire: the restart guard, SET NX PX, and the fencing counter, in one round trip.
-- KEYS[1] = lock key, KEYS[2] = life marker, KEYS[3] = this lock key's fencing counter,
-- KEYS[4] = the restart guard's witness (restart_guard.lua)
-- ARGV[1] = owner token, ARGV[2] = ttl in ms, ARGV[3] = maxTtl in ms, ARGV[4] = '1' if the guard is on,
-- ARGV[5] = who this connection reached, '<run_id>:<db>:<key prefix>' (run_id read once per
--           connection, INFO server),
-- ARGV[6] = '1' if that process keeps every acknowledged write (appendonly yes, appendfsync always),
-- ARGV[7] = when that process started, node clock in µs (server_time_usec - uptime), or -1 if unknown,
-- ARGV[8] = '1' if this client trusts fsynced AOF restarts and the process is durable, a master
--           that was never a replica in this life, and loaded its data from its AOF at start (no
--           AOF rewrite since: not an RDB loaded before AOF was switched on at runtime)
-- Returns: token * 2 + ahead (> 0) if the lock was taken, where ahead = 1 when the token came from
--          the counter rather than this node's clock; 0 if the key is held;
--          -(ms of quarantine left + 1) if the node may have forgotten leases (docs/fencing.md).

-- Redis 6.2 replicates scripts verbatim unless told otherwise; TIME before a write needs
-- effects replication (the default since 5.0; on 7 this call is a no-op).
if redis.replicate_commands then redis.replicate_commands() end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2]) -- µs; token * 2 stays exact in a double until 2112
local max_ttl = tonumber(ARGV[3]) * 1000

-- ---- restart guard: begin (acquire_all.lua runs this same text; ScriptTest checks it) ----
local life_key, witness_key, dry = KEYS[2], KEYS[4], false
--@include restart_guard.lua
-- ---- restart guard: end ----

if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end

--@include fencing_token.lua
