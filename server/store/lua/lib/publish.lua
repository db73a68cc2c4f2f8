-- Every transition, operator command and eviction is published, so that
-- replicas drop their cached copy of the breaker (redis_cache.c).
local function publish(channel, b, tool)
  redis.call('PUBLISH', channel, str(b.ver) .. ' ' .. str(b.gen) .. ' ' .. tool)
end
