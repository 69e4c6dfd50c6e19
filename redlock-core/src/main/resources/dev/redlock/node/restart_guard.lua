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
