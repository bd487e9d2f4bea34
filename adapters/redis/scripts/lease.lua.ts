import {
  DECIDE,
  ENCODE,
  EXTRAS,
  FRAME,
  GCRA,
  READ,
  RECEIPTS,
  replyNumber,
  RESTATE,
  WRITE,
} from './gcra.lua.js';
import { FLEET } from './fleet.lua.js';
import { PACE } from './pace.lua.js';

/**
 * `lease`: `consume`, and when the request is admitted, each bucket
 * additionally gives up to `maxExtra` whole tokens, as many as it holds after
 * the cost (the extras never decide the admission).
 */
export const LEASE_LUA = `--[[
  lease: consume, plus up to maxExtra whole tokens per bucket when admitted.

  Input:
    KEYS[i]   bucket key i
    ARGV[1]   now: milliseconds in the caller's clock, or '' for Redis TIME
    ARGV[2]   padding: extra milliseconds of key lifetime beyond the TAT
    ARGV[3]   receipts: '1' to answer each key's receipt (the Cluster
              slot-by-slot path), else '0'
    ARGV[4 + 4 (i - 1) ...]  per key: rate, burst, cost, maxExtra
  With a fleet count (issue 29; fleet.lua.ts), ARGV[3] is 'f' (no
  receipts) and:
    KEYS[n + i]    bucket i's fleet set, same hash tag
    ARGV[4 + 4 n]  the caller's instance id
    ARGV[5 + 4 n]  window (ms) of the count
    ARGV[6 + 4 n + 4 (i - 1)]  join: whole tokens bucket i gives (when it
              holds them) if other instances lease it already, or asked
              to join it, and maxExtra is less: a key hot across the fleet
              is leased from an instance's first calls. Positive: the
              caller counts as asking (its demand repeats); negative
              (-join): it does not (a first sighting)
    ARGV[7 + 4 n + 4 (i - 1)]  the epoch the caller last saw for bucket i,
              or '': told an epoch while the set has none (or holding a
              pace: its ask tells the rate held), the bucket's state was
              lost (restart, failover) and is taken to be empty
    ARGV[8 + 4 n + 4 (i - 1)]  the caller's demand weight for bucket i
              (its demand over the rate), summed over the fleet
    ARGV[9 + 4 n + 4 (i - 1)]  a pace asked for bucket i ('' for none):
              '<tokens/s>:<tokens>:<min ms>:<max ms>:<sure ms>:<instances>:<tokens
              given back>:<rate of the pace it held>:<that pace's ms>[:<tokens
              it saved and carries into this pace>][:<ms it keeps the tokens it
              takes at once, only after the former>]' (fleet_pace)
  n, the buckets, is #KEYS / 2 then, else (#ARGV - 3) / 4.

  Output: as consume ({ allowed, then per key: state, remaining,
    retryAfterMs, resetMs [, previous, written] }), then one more field per
    key: the extra tokens taken (0 when denied). The decisions are the ones
    consume would answer (the bucket after the cost, before the extras);
    written is the value stored, extras included. With a fleet count, three
    more fields per key: the instances counted for its bucket (0 when it
    took no part: asked no lease, no join), its epoch ('' for none), and
    the sum of the counted instances' demand weights (text), and two more:
    the pace granted (tokens/s, text; 0 for none) and for how long (ms;
    with none, how long until another instance's pace ends), the whole
    tokens the bucket gave at once with the pace, and the tokens the
    instance may save of the pace (text; fleet_pace).
]]
${FRAME}${READ}${WRITE}${GCRA}${EXTRAS}${FLEET}${PACE}
local receipts = ARGV[3] == '1'
local width = 4
if receipts then width = 6 end
local fleet = ARGV[3] == 'f'
local n
if fleet then n = #KEYS / 2 else n = (#ARGV - 3) / 4 end
local buckets = {}
for i = 1, n do
  local a = 4 + 4 * (i - 1)
  local key = KEYS[i]
  local raw = redis.call('GET', key)
  buckets[i] = {
    key = key, rate = tonumber(ARGV[a]), burst = tonumber(ARGV[a + 1]), cost = tonumber(ARGV[a + 2]),
    max_extra = math.max(0, math.floor(tonumber(ARGV[a + 3]))), raw = raw, tat = read(raw),
    charged = false, extra = 0, written = false,
  }
end

local id, window_ms
if fleet then
  id = ARGV[4 + 4 * n]
  window_ms = math.max(1, math.floor(tonumber(ARGV[5 + 4 * n])))
  for i = 1, n do
    local b = buckets[i]
    local a = 6 + 4 * n + 4 * (i - 1)
    b.epoch = fleet_epoch(KEYS[n + i])
    if ARGV[a + 3] ~= '' then
      b.pace = {}
      for x in string.gmatch(ARGV[a + 3], '[^:]+') do b.pace[#b.pace + 1] = tonumber(x) end
    end
    -- The set gone under a caller that saw its epoch, or that holds a pace (the 8th field
    -- of its ask: a live pace keeps the set alive, epoch remembered or not): the state was
    -- lost while the caller leased against it. The bucket is taken to be empty (its tokens
    -- were leased or spent before the loss), never full again.
    if not b.epoch and (ARGV[a + 1] ~= '' or (b.pace and b.pace[8] or 0) > 0) then
      local empty = now + b.burst * 1000 / b.rate
      if not b.tat or b.tat < empty then b.tat = empty end
      b.lost = true
    end
    -- How long a pace's savings may last (pace.ts, savingsCapMs: within half the window the
    -- caller counts by; a call counting nobody, the burst's refill time), and the bucket kept
    -- below full by what the paces may still bring (fleet_held).
    local counted_ms = tonumber(ARGV[5 + 4 * n])
    b.horizon = b.burst / b.rate
    if counted_ms > 0 then b.horizon = math.min(b.horizon, counted_ms / 2000) end
    if b.epoch then
      local members = redis.call('ZRANGEBYSCORE', KEYS[n + i], '-inf', '(+inf', 'WITHSCORES')
      local held = fleet_held(members, frame + now, b.horizon)
      local floor = now + held * 1000 / b.rate
      if held > 0 and (not b.tat or b.tat < floor) then b.tat = floor end
    end
    local join = math.floor(tonumber(ARGV[a]))
    b.joins = join > 0
    join = math.abs(join)
    if join > b.max_extra and fleet_others(KEYS[n + i], id, window_ms) > 0 then b.max_extra = join end
  end
end

local reply
if n > 0 then reply = { 1, false, false, false, false } else reply = { 1 } end
${DECIDE}
if allowed then
  for i = 1, n do
    local b = buckets[i]
    local tat = b.charged
    if b.max_extra > 0 then tat, b.extra = extras(tat, b.rate, b.burst, b.max_extra) end
    b.written = write(b.key, tat)
    b.final = tat
  end
else
  ${RESTATE}
  reply[1] = 0
  -- A bucket found lost stays empty though this request is denied.
  for i = 1, n do
    local b = buckets[i]
    if b.lost then write(b.key, b.tat) end
    b.final = b.tat
  end
end
${ENCODE}
if receipts then
  ${RECEIPTS}
end
for i = 1, n do
  local x = buckets[i].extra
  local slot = 1 + width * n + i
  reply[slot] = x
  ${replyNumber('x', 'reply[slot]')}
end
if fleet then
  for i = 1, n do
    local b = buckets[i]
    local count, epoch, load = 0, b.epoch, 0
    -- Only instances taking leases, or asking to join, take part; a loss is recorded at once
    -- (one reset, not one per instance).
    local a = 6 + 4 * n + 4 * (i - 1)
    local pace, pace_ms, lump, savings = 0, 0, 0, 0
    local asked = b.pace ~= nil
    local weight = tonumber(ARGV[a + 2])
    if b.max_extra > 0 or b.joins or b.lost or asked then count, epoch, load = fleet_count(KEYS[n + i], id, window_ms, epoch, weight) end
    if asked then
      local tat
      -- A fleet within a window of its epoch expects the instances configured and not counted yet.
      local young = epoch ~= '' and frame - tonumber(string.sub(epoch, 2)) < window_ms
      tat, pace, pace_ms, lump, savings = fleet_pace(KEYS[n + i], id, b.final, b.rate, b.burst, b.pace, b.lost, count, weight, b.horizon, young)
      -- Written when a pace was charged or anything given back.
      if tat ~= (b.final or tat - 1) then write(b.key, tat) end
    end
    reply[1 + width * n + n + i] = count
    reply[1 + width * n + 2 * n + i] = epoch or ''
    reply[1 + width * n + 3 * n + i] = string.format('%.6g', load)
    reply[1 + width * n + 4 * n + i] = string.format('%.17g', pace)
    reply[1 + width * n + 5 * n + i] = pace_ms
    ${replyNumber('pace_ms', 'reply[1 + width * n + 5 * n + i]')}
    reply[1 + width * n + 6 * n + i] = lump
    reply[1 + width * n + 7 * n + i] = string.format('%.17g', savings)
  end
end
return reply
`;
