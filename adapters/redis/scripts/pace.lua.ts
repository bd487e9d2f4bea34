/**
 * The paces of a leased bucket's fleet (issue 29; `adapters/two-tier/pace.ts`
 * says what a pace is and why): the members a pace leaves in the fleet set
 * (`fleet.lua.ts`), what the paces may still bring (the bucket is kept that
 * far below full), and `fleet_pace`, which grants one in steps: read the
 * set, keep the others' shares, charge a lost state's paces, size the grant,
 * then charge it or answer a wait. Lua, concatenated after `FLEET` into the
 * lease script (`lease.lua.ts`); uses its `frame` and `now`.
 */
export const PACE = `
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

-- The most a pace call takes of the bucket's own tokens at once (its lump): twice the pace's
-- tokens, and no more than the caller's demand (ask) spends in lump_ms (nil: no such bound), for
-- it gives back what it has not spent by then.
local function lump_most(ask, tokens, lump_ms)
  if lump_ms then return math.min(2 * tokens, ask * lump_ms / 1000) end
  return 2 * tokens
end

-- The rate no pace holds and no instance without one is kept (spare: its share, for each
-- counted or expected), taken by a caller granted g for grant_ms, up to its demand (ask), until
-- the first other pace is renewed (in renewal_ms): left in the bucket, it would wait there
-- until then, since instances holding a pace ask for nothing more. A fleet whose first paces
-- were sized on early readings of its demands (shares that add up to less than the rate) gets
-- the rest of the rate this way, and the other paces' holders, renewing, find it free again.
-- Only when it brings more beyond the share than the caller's next call takes from the bucket
-- as its lump (next_lump, lump_most): that call takes a smaller spare when the caller needs it;
-- held as a pace, it came due through a bursty caller's silences and was dropped past its
-- savings (N = 2 bursty, 3 points of admitted lost). A larger one would wait in the bucket
-- until then, past what that lump takes (a demand of 31/s takes 8 tokens in 250 ms, where a
-- bound of twice the pace's tokens, 128, left such a spare in the bucket). Not when that ends
-- the pace sooner than its own length and leaves it fewer tokens than a pace brings (calls per
-- token would grow), nor when it would last under min_ms.
local function fleet_spare(g, grant_ms, ask, spare, renewal_ms, min_ms, tokens, next_lump)
  local taken = math.min(ask, spare)
  local spare_ms = math.min(grant_ms, renewal_ms)
  if taken <= g or spare_ms < min_ms then return g, grant_ms end
  if (taken - g) * spare_ms / 1000 <= next_lump then return g, grant_ms end
  if spare_ms < grant_ms and taken * spare_ms / 1000 < tokens then return g, grant_ms end
  return taken, spare_ms
end

-- The fleet set as the caller id reads it at \`at\` (absolute ms), its members
-- sorted into: the other instances' live paces (others, their rate; owed, their parts not yet
-- due; paced, rate by holder; first_end and first_renewal, the earliest end and renewal, nil for
-- none), what every other pace may still bring (held_others, as fleet_held counts it), the
-- instances' demand weights (weights, by id), the caller's own pace (own, its member, nil for
-- none; own_rate, own_until), and what a lost state's paces are taken to hold (phantom_member,
-- its rate phantom, its end phantom_end).
local function fleet_scan(key, id, at)
  local f = { others = 0, owed = 0, held_others = 0, paced = {}, weights = {}, own_rate = 0,
    own_until = 0, phantom = 0, phantom_end = 0 }
  local members = redis.call('ZRANGEBYSCORE', key, '-inf', '(+inf', 'WITHSCORES')
  for j = 1, #members, 2 do
    local m = members[j]
    local first = string.byte(m, 1)
    local g, savings, since, holder
    if first == 33 then g, savings, since, holder = pace_member(m) end
    if g then
      local ends = tonumber(members[j + 1])
      if holder == id then
        f.own, f.own_rate, f.own_until = m, g, ends
      else
        f.held_others = f.held_others + pace_held(g, ends, savings, since, at)
        if ends > at then
          f.others = f.others + g
          f.owed = f.owed + g * (ends - at) / 1000
          f.paced[holder] = g
          if not f.first_end or ends < f.first_end then f.first_end = ends end
          -- Its holder renews it a tenth of its length before it ends (pace.ts, PACE_RENEW_SHARE),
          -- its length at most since its savings' start.
          local renewal = ends - 0.1 * (ends - since)
          if not f.first_renewal or renewal < f.first_renewal then f.first_renewal = renewal end
        end
      end
    elseif first == 94 then
      f.phantom_member, f.phantom, f.phantom_end = m, tonumber(string.sub(m, 2)), tonumber(members[j + 1])
    elseif first ~= 33 and m ~= id then
      local w = tonumber(members[j + 1]) % 1
      f.weights[m] = w / (1 - w)
    end
  end
  return f
end

-- What the other instances counted (or expected) lack of their shares of the load (all of it
-- without a pace yet), kept for them; and unpaced, the shares of those without one.
local function fleet_kept(f, rate, load, expected)
  local lacking = rate * expected / math.max(load, 1)
  local unpaced = lacking
  for holder, w in pairs(f.weights) do
    local share = rate * w / math.max(load, 1)
    lacking = lacking + math.max(0, share - (f.paced[holder] or 0))
    if not f.paced[holder] then unpaced = unpaced + share end
  end
  return lacking, unpaced
end

-- After a loss of the state (lost), the paces instances still hold are unknown: they are taken to
-- hold the whole rate but the caller's (held, its last pace's rate), for twice its last pace's
-- length (held_ms), a '^<rate>' member charged as a pace. Each instance telling the pace it held
-- takes its part back from it (never over: what no instance claims stays unused until then).
-- Answers the TAT (current) with that charged or taken back; counts it among f's other paces.
local function fleet_phantom(key, f, current, lost, p, rate, at, horizon_s)
  local min_ms, max_ms, held, held_ms = p[3], p[4], p[8], p[9]
  local interval = 1000 / rate
  if lost then
    f.phantom = math.max(0, rate - held)
    f.phantom_end = at + math.min(max_ms, math.max(min_ms, 2 * held_ms))
    if f.phantom > 0 then
      current = current + f.phantom * (f.phantom_end - at) / 1000 * interval
      redis.call('ZADD', key, string.format('%.17g', f.phantom_end), '^' .. string.format('%.17g', f.phantom))
    end
  elseif f.phantom_member and f.phantom_end > at and held > 0 and not f.own then
    local left = math.max(0, f.phantom - held)
    current = current - (f.phantom - left) * (f.phantom_end - at) / 1000 * interval
    redis.call('ZREM', key, f.phantom_member)
    if left > 0 then redis.call('ZADD', key, string.format('%.17g', f.phantom_end), '^' .. string.format('%.17g', left)) end
    f.phantom = left
  end
  if f.phantom_end > at then
    f.others = f.others + f.phantom
    f.owed = f.owed + f.phantom * (f.phantom_end - at) / 1000
  end
  if f.phantom > 0 then
    f.held_others = f.held_others + pace_held(f.phantom, f.phantom_end, savings_cap(f.phantom, horizon_s), nil, at)
  end
  return current
end

-- The pace granted (tokens/s) and its length (ms; 0 with none): the caller's demand (ask) while
-- the fleet's load is under the rate, else its weight's share of the load; never more than the
-- rate the other paces leave (and for a short pace, no more than leaves the instances counted
-- without a pace their shares). A pace is long (as long as its share takes to bring its tokens,
-- within [min_ms, max_ms]: calls per token stay the same whatever the share) only when its share
-- is sure: the load is over the rate and another instance is counted (count); else it lasts at
-- most sure_ms, and its holder asks again knowing more. Beyond its share, the caller takes the
-- rate no pace holds and nobody is kept until the first other pace is renewed (fleet_spare).
local function fleet_grant(p, f, rate, load, count, weight, lacking, unpaced, at)
  local ask, tokens, min_ms, max_ms, sure_ms, configured = p[1], p[2], p[3], p[4], p[5], p[6]
  local share = ask
  if load > 1 then share = math.min(share, rate * weight / load) end
  -- Its share, once sure; before (weights measured early can overstate the load), up to its
  -- demand from what no pace holds and no other instance's share lacks, for sure_ms at most.
  local sure = load > 1 and count >= math.min(2, configured)
  local g = math.min(ask, rate - f.others, share)
  -- As long as the caller's share takes to bring the tokens (before the bounds below).
  local length = tokens * 1000 / share
  -- A pace renewed within sure_ms (a share of many tokens a second: the heavy instance of a
  -- skewed fleet) leaves the instances without one their shares: their next ask finds them,
  -- rather than whatever the long paces of the others happen to leave.
  if sure and length <= sure_ms then g = math.min(g, math.max(0, rate - f.others - unpaced)) end
  if not sure then g = math.min(ask, rate - f.others, math.max(share, rate - f.others - lacking)) end
  if g <= 0 then return g, 0 end
  -- As long as the caller's share takes to bring the tokens: a caller granted less than its
  -- share (the others' paces hold the rest) asks again as soon as a whole share would.
  local grant_ms = math.min(max_ms, math.max(min_ms, length))
  if not sure then grant_ms = math.min(grant_ms, math.max(min_ms, sure_ms)) end
  -- Granted less than its share (the others' paces hold the rest): asks again when the
  -- first of them ends, by which time its holder has renewed it at its own share.
  -- (At least a token's worth: a pace that brings none is no pace.)
  if g < 0.5 * share and f.first_end then
    grant_ms = math.min(grant_ms, math.max(min_ms, f.first_end - at, 1000 / g))
  end
  if f.first_renewal then
    return fleet_spare(g, grant_ms, ask, rate - f.others - unpaced, f.first_renewal - at, min_ms, tokens,
      lump_most(ask, tokens, p[11]))
  end
  return g, grant_ms
end

-- No pace for the caller: its last one is kept as ended now (what it saved of it shrinks from
-- here, pace-book.ts), unless it is leaving (ask 0: it gave everything back). It waits until the
-- first of the others' paces ends, and asks again then: counted (with its weight) until that end,
-- as a pace's holder is, so that a wait longer than the window does not leave the fleet counted
-- short of the instances configured, every share unsure. (Not one leaving: it is counted no
-- longer than its last call.) Answers as fleet_pace does.
local function fleet_wait(key, id, f, current, ask, weight, at)
  if f.own and ask > 0 then redis.call('ZADD', key, string.format('%.17g', math.min(f.own_until, at)), f.own) end
  if not f.first_end then return current, 0, 0, 0, 0 end
  if ask > 0 then fleet_member(key, id, f.first_end, weight) end
  return current, 0, f.first_end - at, 0, 0
end

-- Charges the pace granted (g for grant_ms) to the bucket at once, into its future refill, with
-- the savings lent and the lump, and records it ('!<rate>:<savings>:<since>:<id>', scored by its
-- end). Answers as fleet_pace does.
local function fleet_charge(key, id, f, current, g, grant_ms, p, rate, burst, weight, horizon_s, at)
  local ask, tokens, saved, lump_ms = p[1], p[2], p[10], p[11]
  local interval = 1000 / rate
  -- The savings lent with the pace: its cap, within the room the bucket already leaves below
  -- full beyond the other paces (lent, they cost no token), and at least what the caller
  -- carries in (unknown: the cap) and a token. The bucket stays that far below full.
  local cap = savings_cap(g, horizon_s)
  local room = (current - now) / interval - f.held_others
  local savings = math.min(cap, math.max(1, saved or cap, room))
  local floor = now + (f.held_others + savings) * interval
  if current < floor then current = floor end
  -- The bucket's own tokens, what no pace has spoken for, come at once with the pace (up to
  -- lump_most): charged ahead of the pace, they would only come due at its rate, and a
  -- fleet whose paces add up to the rate would never spend its burst. The other paces' parts
  -- not yet due are charged to the bucket too, as its future refill, not as tokens taken: they
  -- leave the burst to give (taken with them, the bucket's refill still covers both, the paces
  -- adding up to its rate at most), and what an instance gives back of a lump it did not spend
  -- in time (pace.ts, LUMP_LEASE_TTLS) is given again.
  local lump = (now + burst * interval - current) / interval + f.owed
  lump = math.floor(math.max(0, math.min(lump, lump_most(ask, tokens, lump_ms))))
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

-- Pace (issue 29): a share of the bucket's rate, for instance id, for as long as it takes to
-- bring its tokens (fleet_grant). Its tokens are charged to the bucket at once, into its future
-- refill, and the instance spends them only as they come due, at that rate: the fleet holds no
-- batch of tokens ahead of its spending. The live paces add up to the bucket's rate at most.
-- The caller's own pace is replaced: its part not yet due is given back first (known here, so
-- given back once), and give_back tokens it held are put back. The share is sized by the fleet's
-- load, estimated (instances not measured yet, and while the fleet is young those configured and
-- not counted yet, weigh fleet_fill); a lost state's paces are charged as one (fleet_phantom).
-- Answers the TAT with all that charged, the pace's rate (0: none), how long it lasts (ms; with
-- none, how long until another pace ends), the bucket's own tokens granted with it at once, and
-- the savings lent.
local function fleet_pace(key, id, tat, rate, burst, p, lost, count, weight, horizon_s, young)
  local ask, configured, give_back = p[1], p[6], p[7]
  local interval = 1000 / rate
  local at = frame + now
  local f = fleet_scan(key, id, at)
  local load, expected = fleet_load(f.weights, weight, configured, count, young)
  local lacking, unpaced = fleet_kept(f, rate, load, expected)
  local current = tat
  if current == nil or current < now then current = now end
  current = current - give_back * interval
  if f.own then
    redis.call('ZREM', key, f.own)
    if f.own_until > at then current = current - f.own_rate * (f.own_until - at) / 1000 * interval end
  end
  current = fleet_phantom(key, f, current, lost, p, rate, at, horizon_s)
  local g, grant_ms = fleet_grant(p, f, rate, load, count, weight, lacking, unpaced, at)
  if g * grant_ms / 1000 < 1 then return fleet_wait(key, id, f, current, ask, weight, at) end
  return fleet_charge(key, id, f, current, g, grant_ms, p, rate, burst, weight, horizon_s, at)
end
`;
