-- Release: delete the lock key only if it still holds this acquisition's token.
-- KEYS[1] = lock key, ARGV[1] = owner token.
-- Compare-then-act in one script, so a key that expired and was taken by another owner
-- between our GET and DEL can never be deleted by us (the seeds' "blind DEL" mistake).
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
