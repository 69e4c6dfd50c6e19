-- Vouch for a new node (redlock init-nodes): check, and stamp, in one step, that this node holds
-- nothing of the lock's key prefix, so that the restart guard lets it vote at once.
-- KEYS[1] = the life marker ({prefix}@life), KEYS[2] = the guard's witness ({prefix}@witness)
-- ARGV[1] = the key prefix: every key the lock keeps starts with it (lock keys, fencing counters,
--           the life marker and witness, the previous version's {prefix}@epoch and @fences)
-- ARGV[2] = the run_id the operator was shown ('' to accept any), ARGV[3] = maxTtl in ms,
-- ARGV[4] = '1' to stamp, '0' to check only, ARGV[5] = the most keys the node may hold to be checked,
-- ARGV[6] = the database the clients use
-- Returns {verdict, run_id, marker before or nil, marker written or nil, uptime in s,
--          keys in the database, keys loaded from disk at start (-1 if unknown), key...} where
-- verdict is
--   'NEW'       nothing of the prefix but, at most, a marker this process life stamped (a client's
--               first acquire stamps one, and is refused): stamped '<run_id>:<db>:<prefix>:<d>:0'
--               (restart_guard.lua) and a new witness if ARGV[4] = '1'
--   'VOTES'     a marker of this process life older than maxTtl: the node votes already; untouched
--   'NOT_NEW'   keys of the prefix (up to 10 listed), or a marker of another process life: untouched
--   'RESTARTED' the process is not the one the operator was shown: untouched
--   'TOO_MANY_KEYS' more keys than ARGV[5]: not scanned (one scan blocks the node), untouched
-- Atomic: no lock can be taken on this node between the check and the stamp.
if redis.replicate_commands then redis.replicate_commands() end

local server = redis.call('INFO', 'server')
local run_id = string.match(server, 'run_id:(%x+)')
local uptime = tonumber(string.match(server, 'uptime_in_seconds:(%d+)')) or -1
local loaded = tonumber(string.match(redis.call('INFO', 'persistence'),
  'rdb_last_load_keys_loaded:(%d+)')) or -1
local size = redis.call('DBSIZE')
local life = redis.call('GET', KEYS[1])
local function answer(verdict, written, found)
  local reply = {verdict, run_id, life or false, written or false, uptime, size, loaded}
  for _, key in ipairs(found or {}) do
    reply[#reply + 1] = key
  end
  return reply
end

if ARGV[2] ~= '' and ARGV[2] ~= run_id then
  return answer('RESTARTED')
end
-- A marker of this identity whose witness is as stamped was stamped by this process life, on this
-- data (a client's acquire, an earlier vouch); any other marker comes from data an earlier life,
-- another database or another node left.
local id = run_id .. ':' .. ARGV[6] .. ':' .. ARGV[1]
local durable, epoch
if life and string.find(life, id, 1, true) == 1 then
  durable, epoch = string.match(life, '^:([01]):(%d+)$', #id + 1)
end
local ours = epoch ~= nil and redis.call('OBJECT', 'ENCODING', KEYS[2]) == 'raw'
if ours then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  if now - tonumber(epoch) >= tonumber(ARGV[3]) * 1000 then
    return answer('VOTES')
  end
end
if size > tonumber(ARGV[5]) then
  return answer('TOO_MANY_KEYS')
end

local prefix = ARGV[1]
local found = {}
local cursor = '0'
repeat
  local page = redis.call('SCAN', cursor, 'COUNT', 1000)
  cursor = page[1]
  for _, key in ipairs(page[2]) do
    if string.sub(key, 1, #prefix) == prefix and not (ours and (key == KEYS[1] or key == KEYS[2]))
        and #found < 10 then
      found[#found + 1] = key
    end
  end
until cursor == '0' or #found >= 10
if #found > 0 then
  return answer('NOT_NEW', nil, found)
end

if ARGV[4] ~= '1' then
  return answer('NEW')
end
-- Epoch 0: trusted since always, for no lease was ever granted here to be forgotten. d = 1 lets a
-- node restarted from its fsynced AOF keep its vote (trustFsyncedAofRestarts); a client that sees
-- the node is not durable lowers it at its first acquire, and a 0 this life stamped stays 0.
local written = id .. ':' .. ((ours and durable == '0') and '0' or '1') .. ':0'
redis.call('SET', KEYS[1], written)
redis.set_repl(redis.REPL_NONE) -- the witness as restart_guard.lua makes it
redis.call('DEL', KEYS[2])
redis.call('SETRANGE', KEYS[2], 0, 'w')
redis.set_repl(redis.REPL_ALL)
return answer('NEW', written)
