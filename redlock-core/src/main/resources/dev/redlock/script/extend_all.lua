-- Extend several resources' keys at once: only if every one still holds this acquisition's token,
-- and each to live at least ARGV[2] ms more, never shorter (as extend.lua, per key).
-- KEYS[1..n] = the lock keys, ARGV[1] = owner token, ARGV[2] = new ttl in milliseconds.
-- Returns 1 if every key is ours (each ttl now at least ARGV[2]); 0 if any is not, and then no
-- key is touched: a node that lost one key of the set does not vote for the set.
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return 0
  end
end
local ttl = tonumber(ARGV[2])
for i = 1, #KEYS do
  if redis.call('PTTL', KEYS[i]) < ttl then
    redis.call('PEXPIRE', KEYS[i], ARGV[2])
  end
end
return 1
