/**
 * The fleet count of a leased bucket (issue 29): how many instances take
 * leases from it, so that each can pace its calls by its share of the rate
 * (`adapters/two-tier/fleet-share.ts`). Counted in the lease call itself:
 * no round trip of its own.
 *
 * A sorted set beside the bucket (`<bucket key>:fleet`, same hash tag, so
 * same Cluster slot; declared in `KEYS[]`, as Dragonfly requires), one member
 * per instance id, scored by the millisecond it last asked for a lease.
 * Members older than the caller's window are dropped in the same call, and
 * the set expires a window after its last write: its size is at most the
 * instances that asked within one window, its life at most one window of
 * silence.
 *
 * Uses `frame` (integer milliseconds of the call) from `FRAME`.
 */
export const FLEET = `
-- Instances that asked for a lease of this bucket within window_ms, this one included.
local function fleet_count(key, id, window_ms)
  redis.call('ZADD', key, frame, id)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (frame - window_ms))
  redis.call('PEXPIRE', key, window_ms)
  return redis.call('ZCARD', key)
end
`;
