/**
 * The fleet set of a leased bucket (issue 29): how many instances take
 * leases from it, so that each can pace its calls by its share of the rate
 * (`adapters/two-tier/fleet-share.ts`), whether a newcomer should join with
 * a lease at once, and the bucket's epoch, which tells an instance that the
 * state it leased against was lost (a restart or failover). Kept in the
 * lease call itself: no round trip of its own.
 *
 * A sorted set beside the bucket (`<bucket key>:fleet`, same hash tag, so
 * same Cluster slot; declared in `KEYS[]`, as Dragonfly requires), one member
 * per instance id, scored by the millisecond it last asked for a lease plus
 * its demand weight `w` (its demand over the bucket's rate) as `w / (1 + w)`
 * in the fraction (at today's epoch milliseconds a double keeps about 2^-12
 * of a millisecond: enough for a share), and
 * one epoch member (`~<ms it was created>`, scored `+inf`, so never trimmed).
 * Members older than the caller's window are dropped in the same call, and
 * the set expires a window after its last write: its size is at most the
 * instances that asked within one window, plus one; its life at most one
 * window of silence.
 *
 * Uses `frame` (integer milliseconds of the call) from `FRAME`.
 */
export const FLEET = `
-- The bucket's epoch member ('~<ms>'), or nil when the set is gone (never written, expired, or lost).
local function fleet_epoch(key)
  return redis.call('ZRANGEBYSCORE', key, '+inf', '+inf', 'LIMIT', 0, 1)[1]
end

-- Counts instance id until the millisecond ms, with its demand weight in the score's fraction
-- (w / (1 + w): below 1, decoded by fleet_count and fleet_pace).
local function fleet_member(key, id, ms, weight)
  local w = math.max(0, weight)
  redis.call('ZADD', key, string.format('%.17g', math.floor(ms) + w / (1 + w)), id)
end

-- Instances other than id that asked for a lease of this bucket within window_ms.
local function fleet_others(key, id, window_ms)
  local count = redis.call('ZCOUNT', key, frame - window_ms, '(+inf')
  if redis.call('ZSCORE', key, id) then count = count - 1 end
  return math.max(0, count)
end

-- Counts id in (now, with its demand weight), trims, creates the epoch if missing: the
-- instances counted, the epoch, and the sum of their weights.
local function fleet_count(key, id, window_ms, epoch, weight)
  fleet_member(key, id, frame, weight)
  if not epoch then
    epoch = '~' .. frame
    redis.call('ZADD', key, '+inf', epoch)
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', '(' .. (frame - window_ms))
  -- Never shorter than a live pace needs (fleet_pace).
  if redis.call('PTTL', key) < window_ms then redis.call('PEXPIRE', key, window_ms) end
  local scores = redis.call('ZRANGEBYSCORE', key, '-inf', '(+inf', 'WITHSCORES')
  local total, count = 0, 0
  for j = 2, #scores, 2 do
    -- Paces ('!<rate>:...') and what a lost state's paces are taken to hold ('^<rate>',
    -- fleet_pace) are not instances.
    local first = string.byte(scores[j - 1], 1)
    if first ~= 33 and first ~= 94 then
      local f = tonumber(scores[j]) % 1
      total = total + f / (1 - f)
      count = count + 1
    end
  end
  return count, epoch, total
end
`;
