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
    and, for a fleet count (issue 29), two more after them:
    ARGV[4 + 4 n]  the caller's instance id
    ARGV[5 + 4 n]  window (ms) of the count
    KEYS[n + i]    then bucket i's fleet set (fleet.lua.ts), same hash tag
  n, the buckets, is (#ARGV - 3) / 4 rounded down: a fleet count is told
  by its two extra arguments (#ARGV - 3 is then 2 mod 4).

  Output: as consume ({ allowed, then per key: state, remaining,
    retryAfterMs, resetMs [, previous, written] }), then one more field per
    key: the extra tokens taken (0 when denied). The decisions are the ones
    consume would answer (the bucket after the cost, before the extras);
    written is the value stored, extras included. With a fleet count, one
    more field per key: the instances counted for its bucket (0 for a key
    asking no extra: only instances taking leases take part).
]]
${FRAME}${READ}${WRITE}${GCRA}${EXTRAS}${FLEET}
local receipts = ARGV[3] == '1'
local width = 4
if receipts then width = 6 end
local fleet_args = (#ARGV - 3) % 4
local n = (#ARGV - 3 - fleet_args) / 4
local fleet = fleet_args == 2
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

local reply
if n > 0 then reply = { 1, false, false, false, false } else reply = { 1 } end
${DECIDE}
if allowed then
  for i = 1, n do
    local b = buckets[i]
    local tat = b.charged
    if b.max_extra > 0 then tat, b.extra = extras(tat, b.rate, b.burst, b.max_extra) end
    b.written = write(b.key, tat)
  end
else
  ${RESTATE}
  reply[1] = 0
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
  local id = ARGV[4 + 4 * n]
  local window_ms = math.max(1, math.floor(tonumber(ARGV[5 + 4 * n])))
  for i = 1, n do
    local count = 0
    if buckets[i].max_extra > 0 then count = fleet_count(KEYS[n + i], id, window_ms) end
    reply[1 + width * n + n + i] = count
  end
end
return reply
`;
