-- The restart guard: may this node vote, or could its data lack keys it acknowledged? Only data
-- this process has held in memory since it stamped it is trusted (docs/fencing.md):
-- * the life marker life_key = '<identity>:<d>:<epoch µs>' names who stamped the data (identity =
--   ARGV[5] = '<run_id>:<db>:<key prefix>': the process, the database, the deployment), whether
--   that process keeps every acknowledged write (d), and from when (node clock) it is trusted;
-- * the witness witness_key is a short string made here with SETRANGE, which Redis keeps in the
--   'raw' encoding, and never propagated: a dataset loaded from an RDB file (a restart, DEBUG
--   RELOAD, a full resync from a master) or written by RESTORE or SET holds it as 'embstr', and an
--   AOF replayed or a replica's stream has none.
-- Any other dataset (restarted, resynced, reloaded, flushed, swapped in from another database,
-- restored) is trusted only from now: the node answers quarantined for maxTtl. The includer sets
-- `now`, `max_ttl`, `life_key`, `witness_key`, and `dry` (true: decide, write nothing); this sets
-- `epoch` and `why`.
local life = redis.call('GET', life_key)
local id = ARGV[5]
local durable, epoch, why
if life and string.find(life, id, 1, true) == 1 then
  durable, epoch = string.match(life, '^:([01]):(%d+)$', #id + 1)
end
if not epoch then
  why = life and 'foreign marker' or 'no marker' -- another process, database or deployment's
elseif redis.call('OBJECT', 'ENCODING', witness_key) ~= 'raw' then
  epoch, why = nil, 'data replaced' -- the marker came back with a copy of the data
else
  why = 'trusted'
end
if epoch then
  epoch = tonumber(epoch)
  if ARGV[6] == '0' and durable == '1' and not dry then
    -- This life stopped promising durability (or this client cannot confirm it): a restart
    -- after this point is not trusted. Never upgraded back within a life.
    redis.call('SET', life_key, id .. ':0:' .. string.format('%.0f', epoch))
  end
else
  local function still_as_loaded() -- INFO read now, on this rare path only
    local info = redis.call('INFO', 'persistence') .. redis.call('INFO', 'replication')
    for _, field in ipairs({'aof_enabled:1', 'aof_rewrite_in_progress:0',
        'aof_rewrite_scheduled:0', 'aof_last_rewrite_time_sec:-1', 'role:master',
        'second_repl_offset:-1'}) do
      if not string.find(info, '\r\n' .. field .. '\r\n', 1, true) then
        return false
      end
    end
    -- Nothing in this life that loads, restores or moves data in place (counted since the start,
    -- or since a CONFIG RESETSTAT).
    local stats = redis.call('INFO', 'commandstats')
    for _, name in ipairs({'debug', 'restore', 'restore-asking', 'flushall', 'flushdb', 'swapdb',
        'move', 'copy', 'rename', 'renamenx', 'replicaof', 'slaveof'}) do
      if string.find(stats, '\r\ncmdstat_' .. name .. ':', 1, true) then
        return false
      end
    end
    return true
  end
  local started = tonumber(ARGV[7])
  -- (started is computed from a whole-second uptime: up to 1 s late, hence the second here)
  if life and ARGV[8] == '1' and started >= 0 and now - started + 1000000 < max_ttl
      and string.sub(life, 1, 40) ~= string.sub(id, 1, 40)
      and string.sub(life, 41, #id) == string.sub(id, 41)
      and still_as_loaded() then
    -- Stamped in the same database and deployment by a life that kept every acknowledged write,
    -- and this life loaded it from its AOF at start and since has been no replica, rewritten no
    -- AOF, and run nothing that replaces data (read now: the connection read it when it was
    -- made): a restart that lost nothing, so the old epoch still holds.
    epoch = tonumber(string.match(life, '^:1:(%d+)$', #id + 1))
    why = epoch and 'restarted durable' or why
  end
  epoch = epoch or now
  if not dry then
    redis.call('SET', life_key, id .. ':' .. ARGV[6] .. ':' .. string.format('%.0f', epoch))
    -- A new witness, made here only: never in an AOF or a replica's stream.
    redis.set_repl(redis.REPL_NONE)
    redis.call('DEL', witness_key)
    redis.call('SETRANGE', witness_key, 0, 'w')
    redis.set_repl(redis.REPL_ALL)
  end
end
local left = max_ttl - (now - epoch)
if ARGV[4] == '1' and left > 0 and not dry then
  return -(math.floor(left / 1000) + 1)
end
