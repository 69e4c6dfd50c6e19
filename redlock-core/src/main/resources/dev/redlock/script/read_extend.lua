-- Extend a read lease: make this reader's entry live at least ARGV[2] ms more, only if it is still
-- there and unexpired on this node's clock. Never shortens it (extend.lua's rule: the fencing
-- argument counts on an entry living its full ttl), and keeps the set's own PEXPIRE at least as
-- long as the entry.
-- KEYS[1] = the lock's readers (see read_acquire.lua), ARGV[1] = owner token, ARGV[2] = ttl in ms.
-- Returns 1 if the entry is ours (it now lives at least ARGV[2] ms more), 0 otherwise.
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local expiry = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]))
if not expiry or expiry <= now then
  -- Gone, or expired here: a writer may have come in since. Not revived.
  return 0
end
local wanted = now + tonumber(ARGV[2]) * 1000
if expiry < wanted then
  redis.call('ZADD', KEYS[1], 'XX', string.format('%.0f', wanted), ARGV[1])
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
