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

  Output: as consume ({ allowed, then per key: state, remaining,
    retryAfterMs, resetMs [, previous, written] }), then one more field per
    key: the extra tokens taken (0 when denied). The decisions are the ones
    consume would answer (the bucket after the cost, before the extras);
    written is the value stored, extras included.
]]
${FRAME}${READ}${WRITE}${GCRA}${EXTRAS}
local receipts = ARGV[3] == '1'
local width = 4
if receipts then width = 6 end
local n = #KEYS
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
return reply
`;
