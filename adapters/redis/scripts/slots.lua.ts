import { createHash } from 'node:crypto';

/**
 * Concurrency slots: one sorted set per key, members the slot ids, scores
 * their lease expiry in Redis server time (milliseconds). Every instance
 * reads the same clock, so a slot taken by an instance that died is
 * reclaimed after its lease whichever instance asks next. One key per call
 * (Cluster: the key's own slot).
 */

/** Redis TIME in milliseconds; effects replication asked for where it is not the default (before 5.0). */
const SERVER_TIME = `
if redis.REDIS_VERSION_NUM == nil and redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

export const ACQUIRE_SLOT_LUA = `--[[
  acquire: take one slot of KEYS[1] if fewer than ARGV[1] are held.

  Input:
    KEYS[1]   the key's sorted set
    ARGV[1]   limit: slots the key may hold at once
    ARGV[2]   lease: milliseconds a slot is held at most
    ARGV[3]   id: this slot's member

  Output: { allowed (1/0), slots held afterwards }
]]
${SERVER_TIME}
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local lease = tonumber(ARGV[2])
-- Leases run out here, on every acquire: what a killed instance held comes back.
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
local held = redis.call('ZCARD', key)
if held >= limit then return { 0, held } end
redis.call('ZADD', key, now + lease, ARGV[3])
-- The set outlives its last lease by nothing: idle keys disappear by themselves.
local ttl = redis.call('PTTL', key)
if ttl < lease then redis.call('PEXPIRE', key, lease) end
return { 1, held + 1 }
`;

export const RELEASE_SLOT_LUA = `--[[
  release: give the slot ARGV[1] of KEYS[1] back (nothing if it is gone).
  Output: 1 when it was held, else 0.
]]
return redis.call('ZREM', KEYS[1], ARGV[1])
`;

export const COUNT_SLOTS_LUA = `--[[
  count: the slots of KEYS[1] whose lease has not run out (read only).
]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
`;

/** A slot script as it is sent: by SHA1 (`EVALSHA`), by source when Redis lost it. */
export interface SlotScript {
  readonly source: string;
  readonly sha: string;
}

function script(source: string): SlotScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

export const SLOT_SCRIPTS = {
  acquire: script(ACQUIRE_SLOT_LUA),
  release: script(RELEASE_SLOT_LUA),
  count: script(COUNT_SLOTS_LUA),
} as const;
