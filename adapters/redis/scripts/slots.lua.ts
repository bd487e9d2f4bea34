import { createHash } from 'node:crypto';

/**
 * Concurrency slots: one sorted set per key, members the slot ids, scores
 * their lease expiry in Redis server time (milliseconds). Every instance
 * reads the same clock, so a slot taken by an instance that died is
 * reclaimed after its lease whichever instance asks next.
 *
 * Beside it, a second sorted set (KEYS[2], the same hash tag: the same
 * Cluster slot) of released ids that were not held, scored by when they may
 * be forgotten: an acquisition the caller gave up waiting for (Redis stalled
 * past the store's timeout) may run after the caller released its id; it is
 * refused instead of holding a slot nobody will release.
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
    KEYS[2]   released ids not held when released (see the file comment)

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
-- Released already: its caller gave up on this acquisition (it arrives late).
local released = redis.call('ZSCORE', KEYS[2], ARGV[3])
if released and tonumber(released) > now then return { 0, held } end
redis.call('ZADD', key, now + lease, ARGV[3])
-- The set outlives its last lease by nothing: idle keys disappear by themselves.
local ttl = redis.call('PTTL', key)
if ttl < lease then redis.call('PEXPIRE', key, lease) end
return { 1, held + 1 }
`;

export const RELEASE_SLOT_LUA = `--[[
  release: give the slot ARGV[1] of KEYS[1] back. Not held (never acquired,
  expired, released, or its acquisition not run yet): the id is kept in
  KEYS[2] for ARGV[2] ms, so that a late acquisition of it is refused.
  Output: 1 when it was held, else 0.
]]
${SERVER_TIME}
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then return 1 end
local keep = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], now + keep, ARGV[1])
local ttl = redis.call('PTTL', KEYS[2])
if ttl < keep then redis.call('PEXPIRE', KEYS[2], keep) end
return 0
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
