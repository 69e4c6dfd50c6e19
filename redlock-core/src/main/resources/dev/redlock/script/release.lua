-- Release: delete the lock key only if it still holds this acquisition's token, and raise the
-- resource's fencing counter to the token handed out, so the next grant here gets a larger one.
-- KEYS[1] = lock key, KEYS[2] = its fencing counter
-- ARGV[1] = owner token, ARGV[2] = fencing token handed out ('0' for a rolled-back attempt),
-- ARGV[3] = maxTtl in ms. Returns 1 + 2 x subscribers told if deleted (below), 0 otherwise.
-- Deterministic (no TIME): cheap.
-- A release (not a rollback) publishes the fencing token on the lock key's channel: waiters that
-- subscribe ask again at once (a hint only, docs/design.md "Waiting in line").
-- Compare-then-act in one script, so a key that expired and was taken by another owner
-- between our GET and DEL can never be deleted by us (the seeds' "blind DEL" mistake).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local fence = tonumber(ARGV[2])
if fence > 0 then
  local stored = tonumber(redis.call('GET', KEYS[2]))
  if not stored then
    -- Gone: it expired maxTtl after this node's own token, so this node's clock is past the
    -- fence (or the lease outlived maxTtl through renewals); keep it for maxTtl from now.
    redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
  elseif stored < fence then
    -- Keeps its expiry: maxTtl past this node's own token, which lags the fence by less than a
    -- ttl (larger lags were raised before the grant), so the counter still outlives the fence by
    -- maxTtl - ttl on this node's clock, and any later vote here exceeds it (docs/fencing.md).
    redis.call('SET', KEYS[2], ARGV[2], 'KEEPTTL')
  end
end
redis.call('DEL', KEYS[1])
if fence > 0 then
  -- pcall: a user whose ACL grants no channels still releases; its waiters poll.
  local told = redis.pcall('PUBLISH', KEYS[1], ARGV[2])
  if type(told) == 'number' and told > 0 then
    -- 1 + 2 x the channel's own subscribers (the releasing client's among them if it waits too;
    -- not pattern subscribers, as PUBLISH counts them): the client learns whether other clients
    -- wait, and then leaves the lock to them.
    local numsub = redis.pcall('PUBSUB', 'NUMSUB', KEYS[1])
    if type(numsub) == 'table' and type(numsub[2]) == 'number' then
      return 1 + 2 * numsub[2]
    end
  end
end
return 1
