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

-- A pace member, '!<rate>:<savings>:<since>:<id>': its rate (tokens/s), the tokens its holder
-- may save of it (lent at the grant: fleet_pace), the moment (absolute ms) from which those
-- savings may have grown at that rate (the grant, less what the holder carried in), and the
-- holder's id. Nil for a member it cannot read (written by another version of this script:
-- paces are skipped rather than failing every call on the bucket).
local function pace_member(m)
  local a = string.find(m, ':', 2, true)
  local b = a and string.find(m, ':', a + 1, true)
  local c = b and string.find(m, ':', b + 1, true)
  if not c then return nil end
  local g, savings, since = tonumber(string.sub(m, 2, a - 1)), tonumber(string.sub(m, a + 1, b - 1)),
    tonumber(string.sub(m, b + 1, c - 1))
  if not (g and savings and since) then return nil end
  return g, savings, since, string.sub(m, c + 1)
end

-- Tokens a pace of rate g ending at \`ends\` may still bring at \`at\` beyond the bucket's own:
-- its part not yet due, and what its holder may have saved of it: no more than lent, nor than
-- came due since \`since\` (nil: unknown), shrinking at its rate once it ended (pace-book.ts).
local function pace_held(g, ends, savings, since, at)
  if since then savings = math.min(savings, math.max(0, g * (math.min(at, ends) - since) / 1000)) end
  local left_s = (ends - at) / 1000
  if left_s > 0 then return g * left_s + savings end
  return math.max(0, savings + g * left_s)
end

-- The most a holder may save of a pace at rate g: the pace's rate over horizon_s (its share
-- of the burst, within a lease TTL: pace.ts, savingsCapMs), and at least a token.
local function savings_cap(g, horizon_s)
  return math.max(1, g * horizon_s)
end

-- What the live and recently ended paces of a fleet set (its members, WITHSCORES) may still
-- bring beyond the bucket's own tokens. The bucket is kept that far
-- below full (its TAT at least now + held), so that bucket, paces and savings together never
-- hold more than the burst: a window admits at most burst + rate x window, whatever the
-- paces hold (docs/fleet.md, "The bounds").
local function fleet_held(members, at, horizon_s)
  local held = 0
  for j = 1, #members, 2 do
    local m = members[j]
    local first = string.byte(m, 1)
    if first == 33 then
      local g, savings, since = pace_member(m)
      if g then held = held + pace_held(g, tonumber(members[j + 1]), savings, since, at) end
    elseif first == 94 then
      -- What a lost state's paces are taken to hold: their savings unknown, the whole cap.
      local g = tonumber(string.sub(m, 2))
      held = held + pace_held(g, tonumber(members[j + 1]), savings_cap(g, horizon_s), nil, at)
    end
  end
  return held
end

-- The weight taken for an instance not measured yet: the lower median of the other instances'
-- weights measured (weights, by id), the caller's own and an even share of the configured fleet,
-- so that one instance of many times the others' demand weighs for neither the many nor the few.
local function fleet_fill(weights, own, configured)
  local known = { 1 / configured }
  if own > 0 then known[2] = own end
  for _, w in pairs(weights) do
    if w > 0 then known[#known + 1] = w end
  end
  table.sort(known)
  return known[math.floor((#known + 1) / 2)]
end

-- The fleet's load a pace is sized by: the caller's weight and the other instances' (weights,
-- by id). One counted but not measured yet (weight 0: a first sighting) weighs the fill
-- (fleet_fill), and so, while the fleet is young (within a window of its epoch), does each
-- instance configured and not counted yet: without them, the first callers of a fleet starting
-- together read a load of a few and took shares of it. Fills weights in; answers the load and
-- the part of it expected.
local function fleet_load(weights, weight, configured, count, young)
  local fill = fleet_fill(weights, weight, configured)
  local expected = 0
  if young then expected = math.max(0, configured - count) * fill end
  local load = weight + expected
  for holder, w in pairs(weights) do
    if w <= 0 then weights[holder] = fill end
    load = load + weights[holder]
  end
  return load, expected
end

-- The rate no pace holds and no instance without one is kept (spare: its share, for each
-- counted or expected), taken by a caller granted g for grant_ms, up to its demand (ask), until
-- the first other pace is renewed (in renewal_ms): left in the bucket, it would wait there
-- until then, since instances holding a pace ask for nothing more. A fleet whose first paces
-- were sized on early readings of its demands (shares that add up to less than the rate) gets
-- the rest of the rate this way, and the other paces' holders, renewing, find it free again.
-- Only when it brings more than twice the pace's tokens beyond the share: less, the caller's
-- next call takes it from the bucket as its lump (up to twice its tokens, and no more than it
-- spends), when it needs it; held as a pace, it came due through a bursty caller's silences
-- and was dropped past its savings (N = 2 bursty, 3 points of admitted lost). Not when that ends
-- the pace sooner than its own length and leaves it fewer tokens than a pace brings (calls per
-- token would grow), nor when it would last under min_ms.
local function fleet_spare(g, grant_ms, ask, spare, renewal_ms, min_ms, tokens)
  local taken = math.min(ask, spare)
  local spare_ms = math.min(grant_ms, renewal_ms)
  if taken <= g or spare_ms < min_ms then return g, grant_ms end
  if (taken - g) * spare_ms / 1000 <= 2 * tokens then return g, grant_ms end
  if spare_ms < grant_ms and taken * spare_ms / 1000 < tokens then return g, grant_ms end
  return taken, spare_ms
end

-- Pace (issue 29): a share of the bucket's rate, for instance id, for as long as it takes to
-- bring its tokens (within [min_ms, max_ms]): calls per token stay the same whatever the
-- share. Its tokens are charged to the bucket at once, into its future refill, and the
-- instance spends them only as they come due, at that rate: the fleet holds no batch of
-- tokens ahead of its spending. The live paces ('!<rate>:<savings>:<since>:<id>', scored by the absolute ms
-- they end) add up to the bucket's rate at most. The caller's own pace is replaced: its
-- part not yet due is given back first (known here, so given back once), and give_back
-- tokens it held are put back. The share: the caller's demand (ask, tokens/s) while the
-- fleet's load is under the rate, else its weight's share of the load; never more than the
-- rate the other paces leave (and for a short pace, no more than leaves the instances
-- counted without a pace their shares). After a loss of the state (lost), the paces instances still hold
-- are unknown: they are taken to hold the whole rate but the caller's (held, its last pace's
-- rate), for twice its last pace's length (held_ms), a '^<rate>' member charged as a pace;
-- each instance telling the pace it held takes its part back from it (never over: what no
-- instance claims stays unused until then). A pace is long only when its share is sure: the
-- fleet's load, estimated (instances not measured yet, and while the fleet is young those
-- configured and not counted yet, weigh fleet_fill), is over the rate and another instance is
-- counted (count); else it lasts at most sure_ms, and its holder asks again knowing more.
-- Beyond its share, a caller takes the rate no pace holds and nobody is kept until the first
-- other pace is renewed (fleet_spare).
-- Answers the TAT with all that charged, the pace's rate (0: none), how long it lasts (ms;
-- with none, how long until another pace ends), the bucket's own tokens granted with it at
-- once, and the savings lent.
local function fleet_pace(key, id, tat, rate, burst, p, lost, count, weight, horizon_s, young)
  local ask, tokens, min_ms, max_ms, sure_ms, configured, give_back, held, held_ms, saved, lump_ms =
    p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11]
  local interval = 1000 / rate
  local at = frame + now
  local others, own, own_rate, own_until, first_end, held_others, owed = 0, nil, 0, 0, nil, 0, 0
  local first_renewal = nil
  local paced, weights = {}, {}
  local phantom, phantom_end, phantom_member = 0, 0, nil
  local members = redis.call('ZRANGEBYSCORE', key, '-inf', '(+inf', 'WITHSCORES')
  for j = 1, #members, 2 do
    local m = members[j]
    local first = string.byte(m, 1)
    local g, savings, since, holder
    if first == 33 then g, savings, since, holder = pace_member(m) end
    if g then
      local ends = tonumber(members[j + 1])
      if holder == id then
        own, own_rate, own_until = m, g, ends
      else
        held_others = held_others + pace_held(g, ends, savings, since, at)
        if ends > at then
          others = others + g
          owed = owed + g * (ends - at) / 1000
          paced[holder] = g
          if not first_end or ends < first_end then first_end = ends end
          -- Its holder renews it a tenth of its length before it ends (pace.ts, PACE_RENEW_SHARE),
          -- its length at most since its savings' start.
          local renewal = ends - 0.1 * (ends - since)
          if not first_renewal or renewal < first_renewal then first_renewal = renewal end
        end
      end
    elseif first == 94 then
      phantom_member, phantom, phantom_end = m, tonumber(string.sub(m, 2)), tonumber(members[j + 1])
    elseif first ~= 33 and m ~= id then
      local f = tonumber(members[j + 1]) % 1
      weights[m] = f / (1 - f)
    end
  end
  local load, expected = fleet_load(weights, weight, configured, count, young)
  -- What the other instances counted (or expected) lack of their shares (all of it without a
  -- pace yet) is kept for them; unpaced: the shares of those without one.
  local lacking = rate * expected / math.max(load, 1)
  local unpaced = lacking
  for holder, w in pairs(weights) do
    local owed = rate * w / math.max(load, 1)
    lacking = lacking + math.max(0, owed - (paced[holder] or 0))
    if not paced[holder] then unpaced = unpaced + owed end
  end
  local current = tat
  if current == nil or current < now then current = now end
  current = current - give_back * interval
  if own then
    redis.call('ZREM', key, own)
    if own_until > at then current = current - own_rate * (own_until - at) / 1000 * interval end
  end
  if lost then
    phantom = math.max(0, rate - held)
    phantom_end = at + math.min(max_ms, math.max(min_ms, 2 * held_ms))
    if phantom > 0 then
      current = current + phantom * (phantom_end - at) / 1000 * interval
      redis.call('ZADD', key, string.format('%.17g', phantom_end), '^' .. string.format('%.17g', phantom))
    end
  elseif phantom_member and phantom_end > at and held > 0 and not own then
    local left = math.max(0, phantom - held)
    current = current - (phantom - left) * (phantom_end - at) / 1000 * interval
    redis.call('ZREM', key, phantom_member)
    if left > 0 then redis.call('ZADD', key, string.format('%.17g', phantom_end), '^' .. string.format('%.17g', left)) end
    phantom = left
  end
  if phantom_end > at then
    others = others + phantom
    owed = owed + phantom * (phantom_end - at) / 1000
  end
  if phantom > 0 then
    held_others = held_others + pace_held(phantom, phantom_end, savings_cap(phantom, horizon_s), nil, at)
  end
  local share = ask
  if load > 1 then share = math.min(share, rate * weight / load) end
  -- Its share, once sure; before (weights measured early can overstate the load), up to its
  -- demand from what no pace holds and no other instance's share lacks, for sure_ms at most.
  local sure = load > 1 and count >= math.min(2, configured)
  local g = math.min(ask, rate - others, share)
  -- As long as the caller's share takes to bring the tokens (before the bounds below).
  local length = tokens * 1000 / share
  -- A pace renewed within sure_ms (a share of many tokens a second: the heavy instance of a
  -- skewed fleet) leaves the instances without one their shares: their next ask finds them,
  -- rather than whatever the long paces of the others happen to leave.
  if sure and length <= sure_ms then g = math.min(g, math.max(0, rate - others - unpaced)) end
  if not sure then g = math.min(ask, rate - others, math.max(share, rate - others - lacking)) end
  local grant_ms = 0
  if g > 0 then
    -- As long as the caller's share takes to bring the tokens: a caller granted less than its
    -- share (the others' paces hold the rest) asks again as soon as a whole share would.
    grant_ms = math.min(max_ms, math.max(min_ms, length))
    if not sure then grant_ms = math.min(grant_ms, math.max(min_ms, sure_ms)) end
    -- Granted less than its share (the others' paces hold the rest): asks again when the
    -- first of them ends, by which time its holder has renewed it at its own share.
    -- (At least a token's worth: a pace that brings none is no pace.)
    if g < 0.5 * share and first_end then
      grant_ms = math.min(grant_ms, math.max(min_ms, first_end - at, 1000 / g))
    end
  end
  if g > 0 and first_renewal then g, grant_ms = fleet_spare(g, grant_ms, ask, rate - others - unpaced, first_renewal - at, min_ms, tokens) end
  if g * grant_ms / 1000 < 1 then
    -- No pace: the caller's last one is kept as ended now (what it saved of it shrinks from
    -- here, pace-book.ts), unless the caller is leaving (ask 0: it gave everything back).
    if own and ask > 0 then redis.call('ZADD', key, string.format('%.17g', math.min(own_until, at)), own) end
    if not first_end then return current, 0, 0, 0, 0 end
    -- It waits until the first of the others' paces ends, and asks again then: counted (with
    -- its weight) until that end, as a pace's holder is, so that a wait longer than the window
    -- does not leave the fleet counted short of the instances configured, every share unsure.
    -- (Not one leaving, asking 0: it is counted no longer than its last call.)
    if ask > 0 then fleet_member(key, id, first_end, weight) end
    return current, 0, first_end - at, 0, 0
  end
  -- The savings lent with the pace: its cap, within the room the bucket already leaves below
  -- full beyond the other paces (lent, they cost no token), and at least what the caller
  -- carries in (unknown: the cap) and a token. The bucket stays that far below full.
  local cap = savings_cap(g, horizon_s)
  local room = (current - now) / interval - held_others
  local savings = math.min(cap, math.max(1, saved or cap, room))
  local floor = now + (held_others + savings) * interval
  if current < floor then current = floor end
  -- The bucket's own tokens, what no pace has spoken for, come at once with the pace (up to
  -- twice its tokens): charged ahead of the pace, they would only come due at its rate, and a
  -- fleet whose paces add up to the rate would never spend its burst. The other paces' parts
  -- not yet due are charged to the bucket too, as its future refill, not as tokens taken: they
  -- leave the burst to give (taken with them, the bucket's refill still covers both, the paces
  -- adding up to its rate at most), and what an instance gives back of a lump it did not spend
  -- in time (pace.ts, LUMP_LEASE_TTLS) is given again.
  local lump = (now + burst * interval - current) / interval + owed
  -- No more than the caller's demand spends while it keeps them (lump_ms): it gives back the rest.
  if lump_ms then lump = math.min(lump, ask * lump_ms / 1000) end
  lump = math.floor(math.max(0, math.min(lump, 2 * tokens)))
  current = current + (lump + g * grant_ms / 1000) * interval
  local ends = at + grant_ms
  -- What it carries in counts at once; what it saves of this pace, only once it came due.
  local since = at - math.min(savings, saved or savings) / g * 1000
  local member = '!' .. string.format('%.17g', g) .. ':' .. string.format('%.17g', savings) .. ':'
    .. string.format('%.17g', since) .. ':' .. id
  redis.call('ZADD', key, string.format('%.17g', ends), member)
  -- The instance counts, with its weight, while its pace lasts.
  fleet_member(key, id, ends, weight)
  if redis.call('PTTL', key) < 2 * grant_ms then redis.call('PEXPIRE', key, math.ceil(2 * grant_ms)) end
  return current, g, grant_ms, lump, savings
end
`;
